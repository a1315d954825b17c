package config

import (
	"strings"
	"testing"
	"time"
)

// TestPlatformSessionReset: a platform's own reset_hour and reset_idle
// override the gateway's for its chats only; what a platform leaves out is
// the gateway's; out-of-range values are refused naming their section.
func TestPlatformSessionReset(t *testing.T) {
	t.Parallel()
	doc := "gateway:\n  reset_hour: 6\n  reset_idle: 12h\n  telegram:\n    reset_hour: -1\n  slack:\n    reset_idle: 30m\n"
	c, err := LoadBytes(t.TempDir(), []byte(doc), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		platform string
		hour     int
		idle     time.Duration
	}{
		{"telegram", -1, 12 * time.Hour},
		{"slack", 6, 30 * time.Minute},
		{"discord", 6, 12 * time.Hour},
	} {
		if h, i := c.Gateway.ResetFor(tt.platform); h != tt.hour || i != tt.idle {
			t.Errorf("ResetFor(%s) = %d, %v; want %d, %v", tt.platform, h, i, tt.hour, tt.idle)
		}
	}
	if h, i := (Default(t.TempDir())).Gateway.ResetFor("telegram"); h != DefaultResetHour || i != DefaultResetIdle {
		t.Errorf("default reset = %d, %v", h, i)
	}
	for doc, want := range map[string]string{
		"gateway:\n  telegram:\n    reset_hour: 24\n": "gateway.telegram.reset_hour 24 is not an hour",
		"gateway:\n  slack:\n    reset_idle: -1h\n":   "gateway.slack.reset_idle must not be negative",
	} {
		c, err := LoadBytes(t.TempDir(), []byte(doc), env(nil))
		if err == nil {
			err = c.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", doc, err, want)
		}
	}
}
