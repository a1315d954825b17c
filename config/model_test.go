package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestModelWaits: the model's idle timeout and the Retry-After cap have
// bounded defaults, are read from the model section and must be positive.
func TestModelWaits(t *testing.T) {
	t.Parallel()

	c := Default("/h")
	if c.Model.Timeout != 5*time.Minute || c.Model.MaxRetryAfter != 5*time.Minute {
		t.Fatalf("defaults: timeout %v, max_retry_after %v", c.Model.Timeout, c.Model.MaxRetryAfter)
	}
	home := t.TempDir()
	yaml := "model:\n  timeout: 90s\n  max_retry_after: 3s\n"
	if err := os.WriteFile(filepath.Join(home, FileName), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(home, env(nil))
	if err != nil || c.Model.Timeout != 90*time.Second || c.Model.MaxRetryAfter != 3*time.Second {
		t.Fatalf("loaded %+v, %v", c.Model, err)
	}
	for _, tt := range []struct {
		name   string
		modify func(*Model)
		want   string
	}{
		{"zero cap", func(m *Model) { m.MaxRetryAfter = 0 }, "max_retry_after"},
		{"negative cap", func(m *Model) { m.MaxRetryAfter = -time.Second }, "max_retry_after"},
		{"zero timeout", func(m *Model) { m.Timeout = 0 }, "model timeout"},
	} {
		c := Default("/h")
		tt.modify(&c.Model)
		if err := c.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}
