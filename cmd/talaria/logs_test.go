package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/logfile"
)

// runLogs runs "talaria logs ARGS" for home and returns stdout, stderr and
// the error.
func runLogs(t *testing.T, home string, args ...string) (string, string, error) {
	t.Helper()
	t.Setenv("TALARIA_HOME", home)
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"logs"}, args...))
	err := root.ExecuteContext(t.Context())
	return out.String(), errOut.String(), err
}

func TestLogsCommand(t *testing.T) {
	absent := filepath.Join(t.TempDir(), "absent")
	if _, _, err := runLogs(t, absent); err == nil || !strings.Contains(err.Error(), "no logs yet in "+logfile.Dir(absent)) {
		t.Fatalf("logs without a home: %v", err)
	}
	if _, err := os.Stat(absent); !os.IsNotExist(err) {
		t.Fatalf("logs created the home: %v", err)
	}

	home := t.TempDir()
	if err := os.MkdirAll(logfile.Dir(home), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(kind, text string) {
		if err := os.WriteFile(logfile.Path(home, kind), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("serve", "time=2026-01-01T10:00:01Z msg=a\ntime=2026-01-01T10:00:03Z msg=c\n")
	write("chat", "time=2026-01-01T10:00:02Z msg=b\n")

	out, _, err := runLogs(t, home, "-n", "2")
	if err != nil || out != "chat: time=2026-01-01T10:00:02Z msg=b\nserve: time=2026-01-01T10:00:03Z msg=c\n" {
		t.Fatalf("logs -n 2 = %q, %v", out, err)
	}
	out, _, err = runLogs(t, home, "--file", "serve")
	if err != nil || out != "time=2026-01-01T10:00:01Z msg=a\ntime=2026-01-01T10:00:03Z msg=c\n" {
		t.Fatalf("logs --file serve = %q, %v", out, err)
	}
	if _, _, err := runLogs(t, home, "--file", "worker"); err == nil || !strings.Contains(err.Error(), "there are: chat, serve") {
		t.Fatalf("logs --file worker: %v", err)
	}
	if _, _, err := runLogs(t, home, "--file", "../x"); err == nil || !strings.Contains(err.Error(), "--file") {
		t.Fatalf("logs --file ../x: %v", err)
	}
}
