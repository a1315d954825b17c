package embedded

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"

	"github.com/talaria-agent/talaria/internal/logfile"
)

func decodeLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestSlogBridgeTagsLevelsAndWith(t *testing.T) {
	var buf bytes.Buffer
	h := slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug, AddSource: true})
	var l log.Logger = newSlogLogger(slog.New(h), slog.LevelInfo)

	l.Debug("dropped below min level")
	l.Info("started", tag.NewStringTag("service", "history"), tag.NewInt("shard", 1))
	l = log.With(l, tag.NewStringTag("component", "matching"))
	l.Error("failed", tag.Error(errors.New("boom")))

	lines := decodeLines(t, &buf)
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2: %s", len(lines), buf.String())
	}
	if lines[0]["msg"] != "started" || lines[0]["level"] != "INFO" || lines[0]["service"] != "history" || lines[0]["shard"] != float64(1) {
		t.Errorf("info line = %v", lines[0])
	}
	if lines[1]["level"] != "ERROR" || lines[1]["component"] != "matching" || lines[1]["error"] != "boom" {
		t.Errorf("error line = %v", lines[1])
	}
	src, _ := lines[0]["source"].(map[string]any)
	if file, _ := src["file"].(string); !strings.HasSuffix(file, "logger_test.go") {
		t.Errorf("source = %v, want the caller in logger_test.go", src)
	}
}

func TestSlogBridgeSLogSharesHandler(t *testing.T) {
	var buf bytes.Buffer
	l := newSlogLogger(slog.New(slog.NewJSONHandler(&buf, nil)), slog.LevelWarn)
	sl := log.NewSlogLogger(l)
	sl.Info("quiet")
	sl.Warn("loud", "k", "v")
	lines := decodeLines(t, &buf)
	if len(lines) != 1 || lines[0]["msg"] != "loud" || lines[0]["k"] != "v" {
		t.Fatalf("lines = %v", lines)
	}
}

func TestSlogBridgePanic(t *testing.T) {
	var buf bytes.Buffer
	l := newSlogLogger(slog.New(slog.NewJSONHandler(&buf, nil)), slog.LevelWarn)
	defer func() {
		if recover() == nil {
			t.Fatal("Panic did not panic")
		}
		if !strings.Contains(buf.String(), "bad state") {
			t.Fatalf("panic message not logged: %s", buf.String())
		}
	}()
	l.Panic("bad state")
}

// TestServerLogsGoToTheLogFile: with a process logger from logfile.Open,
// the server's records reach the log file, never the terminal.
func TestServerLogsGoToTheLogFile(t *testing.T) {
	home := t.TempDir()
	var term bytes.Buffer
	logs, err := logfile.Open(logfile.Options{Home: home, Kind: "temporal", Level: "warn", Terminal: &term, CreateDir: true})
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	var l log.Logger = newSlogLogger(logs.Logger, slog.LevelWarn)
	l.Error("persistence unavailable", tag.NewStringTag("service", "history"))
	if term.Len() != 0 {
		t.Fatalf("a server record reached the terminal: %q", term.String())
	}
	data, err := os.ReadFile(logfile.Path(home, "temporal"))
	if err != nil || !strings.Contains(string(data), `msg="persistence unavailable" service=history`) {
		t.Fatalf("log file = %q, %v", data, err)
	}
}

// TestCallerWentAway: an error record whose error is its request's
// context cancelled (the caller stopped waiting) is logged as a warning;
// any other error stays an error.
func TestCallerWentAway(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		tags []tag.Tag
		want bool
	}{
		{"a transaction whose request was cancelled",
			[]tag.Tag{tag.Error(errors.New("UpdateWorkflowExecution failed. Failed to start transaction. Error: context canceled"))}, true},
		{"the bare cancellation", []tag.Tag{tag.Error(errors.New("context canceled"))}, true},
		{"a database error", []tag.Tag{tag.Error(errors.New("UpdateWorkflowExecution failed. Error: database is locked"))}, false},
		{"a deadline", []tag.Tag{tag.Error(errors.New("Error: context deadline exceeded"))}, false},
		{"cancelled in the middle of the text", []tag.Tag{tag.Error(errors.New("context canceled: then the disk filled"))}, false},
		{"no error", []tag.Tag{tag.NewStringTag("wf-id", "turn/s/1")}, false},
	} {
		if got := callerWentAway(tt.tags); got != tt.want {
			t.Errorf("%s: callerWentAway = %v, want %v", tt.name, got, tt.want)
		}
	}

	var buf bytes.Buffer
	l := newSlogLogger(slog.New(slog.NewJSONHandler(&buf, nil)), slog.LevelInfo)
	l.Error("Update workflow execution operation failed.", tag.Error(errors.New("Failed to start transaction. Error: context canceled")))
	l.Error("Update workflow execution operation failed.", tag.Error(errors.New("database is locked")))
	lines := decodeLines(t, &buf)
	if len(lines) != 2 || lines[0]["level"] != "WARN" || lines[1]["level"] != "ERROR" {
		t.Fatalf("records: %v", lines)
	}
}

const fatalHelperEnv = "EMBEDDED_FATAL_HELPER"

// TestFatalHelper is the child process of TestFatalSaysWhyOnStderr; it does
// nothing in a normal run.
func TestFatalHelper(t *testing.T) {
	if os.Getenv(fatalHelperEnv) == "" {
		t.Skip("helper process only")
	}
	l := newSlogLogger(slog.New(slog.NewJSONHandler(io.Discard, nil)), slog.LevelInfo).With(tag.Service("history"))
	l.Fatal("Failed to start gRPC listener", tag.Error(errors.New("listen tcp 127.0.0.1:20001: bind: address already in use")), tag.Address("127.0.0.1:20001"), tag.NewStringTag("wf-id", "x"))
}

// TestFatalSaysWhyOnStderr: the server's Fatal ends the process with exit
// status 1 and one line on stderr naming the cause, whatever the log file
// gets, so a serve that cannot start never exits in silence.
func TestFatalSaysWhyOnStderr(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFatalHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), fatalHelperEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("child: %v, want exit status 1", err)
	}
	want := "talaria: the embedded Temporal server cannot go on: Failed to start gRPC listener; service history; error listen tcp 127.0.0.1:20001: bind: address already in use; address 127.0.0.1:20001\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}
