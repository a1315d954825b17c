package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoad(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name  string
		yaml  string
		env   map[string]string
		check func(t *testing.T, c Config)
		err   string
	}{
		{"defaults", "", nil, func(t *testing.T, c Config) {
			if c.MaxIterations != 90 || c.Model.Name != DefaultModel || c.Temporal.Namespace != "default" ||
				!c.Temporal.Embedded() || c.Model.Configured() || !c.Model.Streaming() || c.HeartbeatTimeout != 10*time.Second {
				t.Fatalf("%+v", c)
			}
		}, ""},
		{"structured yaml", "model:\n  base_url: http://x/v1\n  name: llama\n  stream: false\n  timeout: 2m\nmax_iterations: 5\ntemporal:\n  address: t:7233\n", nil,
			func(t *testing.T, c Config) {
				if c.Model.BaseURL != "http://x/v1" || c.Model.Name != "llama" || c.Model.Streaming() || c.MaxIterations != 5 ||
					c.Temporal.Address != "t:7233" || c.Temporal.Embedded() || c.Model.Timeout != 2*time.Minute {
					t.Fatalf("%+v", c)
				}
			}, ""},
		{"env-style keys in yaml", "OPENAI_BASE_URL: http://y/v1\nOPENAI_API_KEY: k\nTALARIA_MODEL: m2\n", nil,
			func(t *testing.T, c Config) {
				if c.Model.BaseURL != "http://y/v1" || c.Model.APIKey != "k" || c.Model.Name != "m2" {
					t.Fatalf("%+v", c)
				}
			}, ""},
		{"env beats yaml", "model:\n  name: from-file\n", map[string]string{"TALARIA_MODEL": "from-env", "TALARIA_MAX_ITERATIONS": "7"},
			func(t *testing.T, c Config) {
				if c.Model.Name != "from-env" || c.MaxIterations != 7 {
					t.Fatalf("%+v", c)
				}
			}, ""},
		{"key only means OpenAI", "", map[string]string{"OPENAI_API_KEY": "sk"}, func(t *testing.T, c Config) {
			if !c.Model.Configured() || c.Model.Endpoint() != "https://api.openai.com/v1" {
				t.Fatalf("%+v", c)
			}
		}, ""},
		{"bad yaml", "model: [", nil, nil, "config.yaml"},
		{"bad number env", "", map[string]string{"TALARIA_MAX_ITERATIONS": "lots"}, nil, "TALARIA_MAX_ITERATIONS"},
		{"bad duration env", "", map[string]string{"TALARIA_HEARTBEAT_TIMEOUT": "soon"}, nil, "TALARIA_HEARTBEAT_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			home := t.TempDir()
			if tt.yaml != "" {
				if err := os.WriteFile(filepath.Join(home, FileName), []byte(tt.yaml), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			c, err := Load(home, env(tt.env))
			if tt.err != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want ErrInvalid mentioning %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name   string
		modify func(c *Config)
		err    string
	}{
		{"ok", func(*Config) {}, ""},
		{"zero iterations", func(c *Config) { c.MaxIterations = 0 }, "max_iterations"},
		{"port", func(c *Config) { c.Temporal.Port = 70000 }, "port"},
		{"namespace", func(c *Config) { c.Temporal.Namespace = "" }, "namespace"},
		{"log level", func(c *Config) { c.LogLevel = "loud" }, "log_level"},
		{"heartbeat", func(c *Config) { c.HeartbeatTimeout = time.Millisecond }, "heartbeat_timeout"},
		{"two problems", func(c *Config) { c.MaxIterations = -1; c.Model.Name = "" }, "model name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			c := Default("/h")
			tt.modify(&c)
			err := c.Validate()
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want mention of %q", err, tt.err)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()

	wd, _ := os.Getwd()
	tests := []struct{ in, want string }{
		{"postgres://u@h/db", "postgres://u@h/db"},
		{"file:x.db?mode=rwc", "file:x.db?mode=rwc"},
		{"/abs/t.db", "/abs/t.db"},
		{"rel.db", filepath.Join(wd, "rel.db")},
	}
	for _, tt := range tests {
		c := Config{DB: tt.in}
		if err := c.Normalize(); err != nil || c.DB != tt.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", tt.in, c.DB, err, tt.want)
		}
	}
}

func TestHomeDir(t *testing.T) {
	t.Parallel()

	h, err := HomeDir(env(map[string]string{"TALARIA_HOME": "/tmp/th"}))
	if err != nil || h != "/tmp/th" {
		t.Fatalf("HomeDir = %q, %v", h, err)
	}
	h, err = HomeDir(env(nil))
	if err != nil || !strings.HasSuffix(h, ".talaria") {
		t.Fatalf("default HomeDir = %q, %v", h, err)
	}
}
