package config

import (
	"strings"
	"testing"
)

func TestAPIValidation(t *testing.T) {
	t.Parallel()

	for _, tt := range []struct {
		listen, key string
		problem     string
	}{
		{"", "", ""},
		{"127.0.0.1:8642", "", ""},
		{":8642", "a-key-long-enough-1234", ""},
		{"8642", "", "api.listen"},
		{"127.0.0.1:99999", "", "api.listen"},
		{"127.0.0.1:8642", "short", "too short"},
		{"127.0.0.1:8642", "a-key-long-enough-1234\n", "white space"},
	} {
		cfg := Default(t.TempDir())
		cfg.API.Listen, cfg.API.Key = tt.listen, tt.key
		err := cfg.Validate()
		if (err == nil) != (tt.problem == "") || err != nil && !strings.Contains(err.Error(), tt.problem) {
			t.Errorf("listen %q key %q: %v, want %q", tt.listen, tt.key, err, tt.problem)
		}
	}
}

func TestLoopback(t *testing.T) {
	t.Parallel()

	for listen, want := range map[string]bool{
		"127.0.0.1:8642": true, "127.1.2.3:1": true, "[::1]:8642": true, "localhost:8642": true,
		":8642": false, "0.0.0.0:8642": false, "[::]:8642": false, "192.168.1.5:8642": false,
		"example.com:80": false, "nonsense": false,
	} {
		if got := Loopback(listen); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", listen, got, want)
		}
	}
}
