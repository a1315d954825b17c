package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestBadInput: every bad input gets one clear line on stderr and exit 2.
func TestBadInput(t *testing.T) {
	t.Parallel()
	model := fakellm.New()
	defer model.Close()
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		want  string
		setup func(t testing.TB, u *user)
	}{
		{"unknown flag", nil, []string{"chat", "--frobnicate"}, "unknown flag: --frobnicate", nil},
		{"unknown command", nil, []string{"frobnicate"}, "unknown command", nil},
		{"serve unknown flag", nil, []string{"serve", "--nope"}, "unknown flag: --nope", nil},
		{"bad max iterations", nil, []string{"chat", "-q", "hi", "--max-iterations", "0"}, "--max-iterations", nil},
		{"not a number", nil, []string{"chat", "-q", "hi", "--max-iterations", "many"}, "invalid argument", nil},
		{"bad session id", nil, []string{"chat", "-q", "hi", "--session", "../etc"}, "--session", nil},
		{"no endpoint", map[string]string{"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}, []string{"chat", "-q", "hi"}, "no model endpoint is configured", nil},
		{"unreachable endpoint", map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, []string{"chat", "-q", "hi"}, "unreachable", nil},
		{"invalid db dsn", nil, []string{"chat", "-q", "hi", "--db", "postgres://%zz"}, "invalid database DSN", nil},
		{"unreachable postgres", nil, []string{"chat", "-q", "hi", "--db", "postgres://u@127.0.0.1:1/x?connect_timeout=2"}, "database", nil},
		{"home not writable", map[string]string{"TALARIA_HOME": filepath.Join(notADir, "home")}, []string{"chat", "-q", "hi"}, "TALARIA_HOME", nil},
		{"serve home not writable", map[string]string{"TALARIA_HOME": filepath.Join(notADir, "home")}, []string{"serve"}, "TALARIA_HOME", nil},
		{"stop without a session", nil, []string{"stop"}, "needs 1 argument", nil},
		{"bad session for stop", nil, []string{"stop", "../x"}, "session", nil},
		{"control without serve", nil, []string{"status", "s1"}, "no talaria serve is running", writeConfig("")},
		{"stop without serve", nil, []string{"stop", "s1"}, "no talaria serve is running", writeConfig("")},
		{"stray argument", nil, []string{"chat", "extra"}, "takes no arguments", nil},
		{"both session flags", nil, []string{"chat", "-q", "x", "--session", "a", "--continue"}, "exclude each other", nil},
		{"worker without temporal", nil, []string{"worker"}, "external Temporal", nil},
		{"bad config file", nil, []string{"chat", "-q", "hi"}, "config.yaml", writeConfig("model: [unclosed")},
		{"bad config value", nil, []string{"chat", "-q", "hi"}, "log_level", writeConfig("log_level: loud\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUser(t, model.URL())
			if tt.setup != nil {
				tt.setup(t, u)
			}
			for k, v := range tt.env {
				u.env[k] = v
			}
			stdout, stderr, code := u.run(time.Minute, tt.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2\nstdout:%s\nstderr:%s", code, stdout, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "talaria: ") || !strings.Contains(lines[0], tt.want) {
				t.Fatalf("stderr must be one line containing %q, got:\n%s", tt.want, stderr)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Fatalf("stack trace on stderr:\n%s", stderr)
			}
		})
	}
}

func writeConfig(text string) func(t testing.TB, u *user) {
	return func(t testing.TB, u *user) {
		if err := os.MkdirAll(u.home, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(u.home, "config.yaml"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHelp: every command explains itself.
func TestHelp(t *testing.T) {
	t.Parallel()
	u := newUser(t, "http://127.0.0.1:1/v1")
	cmds := [][]string{{"--help"}}
	for _, name := range []string{"serve", "chat", "send", "steer", "stop", "status", "approve", "deny", "answer",
		"worker", "temporal", "sessions", "config", "memory", "cron", "scheduler", "model", "setup", "logs", "version", "doctor"} {
		cmds = append(cmds, []string{name, "--help"})
	}
	for _, cmd := range cmds {
		stdout, stderr, code := u.run(time.Minute, cmd...)
		if code != 0 || !strings.Contains(stdout, "Usage:") {
			t.Fatalf("%v: exit %d\n%s%s", cmd, code, stdout, stderr)
		}
	}
}
