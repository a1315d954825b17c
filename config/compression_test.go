package config

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCompressionDefaults(t *testing.T) {
	t.Parallel()

	want := Compression{Enabled: true, Threshold: 0.5, KeepFirst: 3, KeepLast: 20,
		OverflowAttempts: 3, SummaryCooldown: 10 * time.Minute}
	if got := DefaultCompression(); got != want {
		t.Fatalf("DefaultCompression() = %+v, want %+v", got, want)
	}
	if got := Default("/h").Compression; got != want {
		t.Fatalf("Default().Compression = %+v, want %+v", got, want)
	}
	if p := want.problems(); len(p) != 0 {
		t.Fatalf("defaults have problems: %v", p)
	}
}

func TestValidateCompression(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name   string
		modify func(c *Compression)
		err    string // "" when valid
	}{
		{"defaults", func(*Compression) {}, ""},
		{"disabled", func(c *Compression) { c.Enabled = false }, ""},
		{"context window 1023", func(c *Compression) { c.ContextWindow = 1023 }, "compression.context_window"},
		{"context window 0: the model's", func(c *Compression) { c.ContextWindow = 0 }, ""},
		{"context window -1", func(c *Compression) { c.ContextWindow = -1 }, "compression.context_window"},
		{"context window 1024", func(c *Compression) { c.ContextWindow = 1024 }, ""},
		{"threshold 0", func(c *Compression) { c.Threshold = 0 }, "compression.threshold"},
		{"threshold -0.1", func(c *Compression) { c.Threshold = -0.1 }, "compression.threshold"},
		{"threshold 1.01", func(c *Compression) { c.Threshold = 1.01 }, "compression.threshold"},
		{"threshold 1", func(c *Compression) { c.Threshold = 1 }, ""},
		{"threshold 0.01", func(c *Compression) { c.Threshold = 0.01 }, ""},
		{"threshold NaN", func(c *Compression) { c.Threshold = math.NaN() }, "compression.threshold"},
		{"threshold +Inf", func(c *Compression) { c.Threshold = math.Inf(1) }, "compression.threshold"},
		{"keep_first 0", func(c *Compression) { c.KeepFirst = 0 }, "keep_first"},
		{"keep_first -1", func(c *Compression) { c.KeepFirst = -1 }, "keep_first"},
		{"keep_first 1", func(c *Compression) { c.KeepFirst = 1 }, ""},
		{"keep_last 0", func(c *Compression) { c.KeepLast = 0 }, "keep_last"},
		{"keep_last 1", func(c *Compression) { c.KeepLast = 1 }, ""},
		{"overflow_attempts -1", func(c *Compression) { c.OverflowAttempts = -1 }, "compression.overflow_attempts"},
		{"overflow_attempts 0", func(c *Compression) { c.OverflowAttempts = 0 }, ""},
		{"summary_cooldown negative", func(c *Compression) { c.SummaryCooldown = -time.Second }, "compression.summary_cooldown"},
		{"summary_cooldown 0", func(c *Compression) { c.SummaryCooldown = 0 }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			c := Default("/h")
			tt.modify(&c.Compression)
			err := c.Validate()
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want ErrInvalid mentioning %q", err, tt.err)
			}
		})
	}
}

// TestValidateCompressionAllProblems: every problem is reported at once.
func TestValidateCompressionAllProblems(t *testing.T) {
	t.Parallel()

	c := Default("/h")
	c.Compression = Compression{ContextWindow: 10, Threshold: 2, KeepFirst: 0, KeepLast: 0, OverflowAttempts: -2, SummaryCooldown: -1}
	err := c.Validate()
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
	for _, key := range []string{"context_window", "threshold", "keep_first", "keep_last", "overflow_attempts", "summary_cooldown"} {
		if !strings.Contains(err.Error(), key) {
			t.Errorf("err = %v, want mention of %q", err, key)
		}
	}
	if n := len(c.Compression.problems()); n != 5 {
		t.Errorf("problems = %d, want 5 (keep_first and keep_last share one)", n)
	}
}

func TestLoadCompression(t *testing.T) {
	t.Parallel()

	def := DefaultCompression()
	tests := []struct {
		name string
		yaml string
		want Compression
	}{
		{"no block keeps the defaults", "max_iterations: 5\n", def},
		{"threshold only", "compression:\n  threshold: 0.7\n",
			Compression{Enabled: true, Threshold: 0.7, KeepFirst: 3, KeepLast: 20,
				OverflowAttempts: 3, SummaryCooldown: 10 * time.Minute}},
		{"disabled only", "compression:\n  enabled: false\n",
			Compression{Threshold: 0.5, KeepFirst: 3, KeepLast: 20,
				OverflowAttempts: 3, SummaryCooldown: 10 * time.Minute}},
		{"every key", "compression:\n  enabled: false\n  context_window: 32000\n  threshold: 0.8\n  keep_first: 2\n" +
			"  keep_last: 10\n  overflow_attempts: 0\n  summary_cooldown: 90s\n",
			Compression{ContextWindow: 32000, Threshold: 0.8, KeepFirst: 2, KeepLast: 10, SummaryCooldown: 90 * time.Second}},
		{"beside other blocks", "model:\n  name: llama\ncompression:\n  keep_last: 8\n  summary_cooldown: 1h\nmax_iterations: 5\n",
			Compression{Enabled: true, Threshold: 0.5, KeepFirst: 3, KeepLast: 8,
				OverflowAttempts: 3, SummaryCooldown: time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, FileName), []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := Load(home, env(nil))
			if err != nil {
				t.Fatal(err)
			}
			if c.Compression != tt.want {
				t.Fatalf("Compression = %+v, want %+v", c.Compression, tt.want)
			}
			if err := c.Validate(); err != nil {
				t.Fatalf("loaded config invalid: %v", err)
			}
		})
	}
}

// TestLoadCompressionInvalid: a loaded block with a bad value fails
// validation, naming the key.
func TestLoadCompressionInvalid(t *testing.T) {
	t.Parallel()

	tests := []struct{ yaml, key string }{
		{"compression:\n  threshold: 1.5\n", "compression.threshold"},
		{"compression:\n  context_window: 512\n", "compression.context_window"},
		{"compression:\n  keep_last: 0\n", "keep_last"},
		{"compression:\n  overflow_attempts: -1\n", "compression.overflow_attempts"},
		{"compression:\n  summary_cooldown: -5m\n", "compression.summary_cooldown"},
	}
	for _, tt := range tests {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, FileName), []byte(tt.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(home, env(nil))
		if err != nil {
			t.Fatalf("%q: Load: %v", tt.yaml, err)
		}
		if err := c.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.key) {
			t.Errorf("%q: Validate = %v, want ErrInvalid mentioning %q", tt.yaml, err, tt.key)
		}
	}
}

// TestLoadCompressionBadValue: a value of the wrong kind fails the load
// (ErrInvalid naming the file) instead of being read as something else; a
// bare number is not a duration in YAML (600 would otherwise be 600ns).
func TestLoadCompressionBadValue(t *testing.T) {
	t.Parallel()

	for _, yaml := range []string{
		"compression:\n  summary_cooldown: 600\n",
		"compression:\n  summary_cooldown: soon\n",
		"compression:\n  keep_last: many\n",
		"compression:\n  threshold: [0.5]\n",
	} {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, FileName), []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(home, env(nil)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), FileName) {
			t.Errorf("%q: Load err = %v, want ErrInvalid naming %s", yaml, err, FileName)
		}
	}
}
