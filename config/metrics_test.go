package config

import (
	"strings"
	"testing"
)

func TestMetricsListenValidation(t *testing.T) {
	t.Parallel()

	for _, tt := range []struct {
		listen string
		ok     bool
	}{
		{"", true},
		{"127.0.0.1:9464", true},
		{":9464", true},
		{"[::1]:9464", true},
		{"localhost:0", true},
		{"9464", false},
		{"127.0.0.1", false},
		{"127.0.0.1:http", false},
		{"127.0.0.1:70000", false},
		{"127.0.0.1:-1", false},
	} {
		cfg := Default(t.TempDir())
		cfg.Metrics.Listen = tt.listen
		err := cfg.Validate()
		if (err == nil) != tt.ok {
			t.Errorf("metrics.listen %q: Validate() = %v, want ok=%v", tt.listen, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "metrics.listen") {
			t.Errorf("metrics.listen %q: error %q does not name the key", tt.listen, err)
		}
	}
}

func TestMetricsListenFromFileAndFlag(t *testing.T) {
	t.Parallel()

	home := t.TempDir()
	cfg, err := LoadBytes(home, []byte("metrics:\n  listen: 127.0.0.1:9464\n"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Metrics.Listen != "127.0.0.1:9464" {
		t.Fatalf("metrics.listen from the file = %q", cfg.Metrics.Listen)
	}
	flag := ""
	Overrides{MetricsListen: &flag}.Apply(&cfg)
	if cfg.Metrics.Listen != "" {
		t.Fatalf("an empty --metrics-listen leaves %q, want metrics off", cfg.Metrics.Listen)
	}
}
