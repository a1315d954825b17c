package telemetry

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestServeProfiles: the profiles answer on a loopback address; any other
// address, or one that is not host:port, is refused in one line before
// anything listens.
func TestServeProfiles(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.DiscardHandler)
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "10.1.2.3:0", "example.com:6060", ":6060", "no-port"} {
		if s, err := ServeProfiles(addr, quiet); !errors.Is(err, ErrListen) || strings.Contains(err.Error(), "\n") {
			_ = s.Close()
			t.Errorf("ServeProfiles(%q) = %v, want a one-line ErrListen", addr, err)
		}
	}
	s, err := ServeProfiles("127.0.0.1:0", quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasSuffix(s.URL(), ProfilesPath) {
		t.Fatalf("URL %s", s.URL())
	}
	for path, want := range map[string]string{"": "goroutine", "cmdline": "", "goroutine?debug=1": "goroutine profile:"} {
		resp, err := http.Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s%s: %d %.200q", s.URL(), path, resp.StatusCode, body)
		}
	}
}
