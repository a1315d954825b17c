package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/logfile"
)

// TestSDKLoggerKeepsRoutineErrorsQuiet: through the SDK's own structured
// logger adapter, as the worker logs, per-attempt activity errors and
// failed heartbeats are debug lines; panics and other errors and warnings
// stay visible; info lines are dropped.
func TestSDKLoggerKeepsRoutineErrorsQuiet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		base  slog.Level
		log   func(sdklog.Logger)
		shown []string // substrings of what is written; nil: nothing
	}{
		{"activity attempt error", slog.LevelInfo, func(l sdklog.Logger) {
			l.Error("Activity error.", "ActivityType", "CallModel", "Attempt", 1, "Error", errors.New("rate_limit"))
		}, nil},
		{"activity cancelled by a stopping worker", slog.LevelInfo, func(l sdklog.Logger) {
			l.Error("Activity error.", "ActivityType", "ExecuteTools", "Error", "context canceled")
		}, nil},
		{"heartbeat failed", slog.LevelInfo, func(l sdklog.Logger) {
			l.Warn("RecordActivityHeartbeat with error", "Error", "unavailable")
		}, nil},
		{"routine error with debug logging", slog.LevelDebug, func(l sdklog.Logger) {
			l.Error("Activity error.", "ActivityType", "CallModel")
		}, []string{"level=DEBUG", `msg="Activity error."`, "ActivityType=CallModel"}},
		{"routine error after With", slog.LevelInfo, func(l sdklog.Logger) {
			sdklog.With(l, "WorkerID", "w1").Error("Activity error.")
		}, nil},
		{"activity panic", slog.LevelInfo, func(l sdklog.Logger) {
			l.Error("Activity panic.", "PanicError", "boom")
		}, []string{"level=ERROR", `msg="Activity panic."`, "PanicError=boom"}},
		{"workflow task error", slog.LevelInfo, func(l sdklog.Logger) {
			l.Error("Workflow panic", "Error", "nondeterminism")
		}, []string{"level=ERROR", "Workflow panic"}},
		{"other warning", slog.LevelInfo, func(l sdklog.Logger) {
			sdklog.With(l, "WorkerID", "w1").Warn("Failed to poll for task.", "Error", "unavailable")
		}, []string{"level=WARN", "Failed to poll", "WorkerID=w1"}},
		{"info is dropped", slog.LevelInfo, func(l sdklog.Logger) { l.Info("Started Worker") }, nil},
		{"info is dropped with debug logging", slog.LevelDebug, func(l sdklog.Logger) { l.Info("Started Worker") }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			base := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.base}))
			tt.log(sdklog.NewStructuredLogger(quiet(base)))
			got := buf.String()
			if tt.shown == nil && got != "" {
				t.Fatalf("wrote %q, want nothing", got)
			}
			for _, want := range tt.shown {
				if !strings.Contains(got, want) {
					t.Errorf("wrote %q, want it to contain %q", got, want)
				}
			}
			if strings.Count(got, "\n") > 1 {
				t.Errorf("wrote more than one line: %q", got)
			}
		})
	}
}

// TestSDKLogsGoToTheLogFile: with a process logger from logfile.Open, the
// SDK's records (routine errors included, as logged) reach the log file
// and not the terminal.
func TestSDKLogsGoToTheLogFile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var term bytes.Buffer
	logs, err := logfile.Open(logfile.Options{Home: home, Kind: "worker", Level: "warn", Terminal: &term, CreateDir: true})
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	l := sdklog.With(sdklog.NewStructuredLogger(quiet(logs.Logger)), "WorkerID", "w1")
	l.Error("Activity error.", "ActivityType", "CallModel")
	l.Warn("Failed to poll for task.")
	if term.Len() != 0 {
		t.Fatalf("SDK records reached the terminal: %q", term.String())
	}
	data, err := os.ReadFile(logfile.Path(home, "worker"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`level=ERROR msg="Activity error."`, "WorkerID=w1", "Failed to poll"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("log file lacks %q:\n%s", want, data)
		}
	}
}

// TestSDKRoutineStopsAreNotErrors: in the log file, an activity attempt
// that ended because it was cancelled (an interrupt, a stop) is an info
// line, told by its error's type; every other activity error stays an
// error, even one whose text only reads like a cancellation.
func TestSDKRoutineStopsAreNotErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		log   func(sdklog.Logger)
		level string
	}{
		{"activity cancelled by an interrupt", func(l sdklog.Logger) {
			l.Error("Activity error.", "ActivityType", "ExecuteTools", "Error", fmt.Errorf("execute tools: %w", context.Canceled))
		}, "INFO"},
		{"activity answered cancelled", func(l sdklog.Logger) {
			l.Error("Activity error.", "ActivityType", "CallModel", "Error", temporal.NewCanceledError())
		}, "INFO"},
		{"heartbeat answered cancelled", func(l sdklog.Logger) {
			l.Warn("RecordActivityHeartbeat with error", "Error", temporal.NewCanceledError())
		}, "INFO"},
		{"a cancellation in words only", func(l sdklog.Logger) {
			l.Error("Activity error.", "ActivityType", "CallModel", "Error", errors.New("context canceled"))
		}, "ERROR"},
		{"activity timed out", func(l sdklog.Logger) {
			l.Error("Activity error.", "ActivityType", "CallModel", "Error", context.DeadlineExceeded)
		}, "ERROR"},
		{"model call failed", func(l sdklog.Logger) {
			l.Error("Activity error.", "ActivityType", "CallModel", "Error", errors.New("upstream exploded"))
		}, "ERROR"},
		{"heartbeat failed", func(l sdklog.Logger) {
			l.Warn("RecordActivityHeartbeat with error", "Error", errors.New("unavailable"))
		}, "WARN"},
		{"a panic with a cancelled error", func(l sdklog.Logger) {
			l.Error("Activity panic.", "Error", context.Canceled)
		}, "ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			var term bytes.Buffer
			logs, err := logfile.Open(logfile.Options{Home: home, Kind: "worker", Level: "warn", Terminal: &term, CreateDir: true})
			if err != nil {
				t.Fatal(err)
			}
			defer logs.Close()
			tt.log(sdklog.With(sdklog.NewStructuredLogger(quiet(logs.Logger)), "WorkerID", "w1"))
			data, err := os.ReadFile(logfile.Path(home, "worker"))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(data); strings.Count(got, "\n") != 1 || !strings.Contains(got, "level="+tt.level+" ") || !strings.Contains(got, "WorkerID=w1") {
				t.Errorf("log file: %q, want one %s line", got, tt.level)
			}
			if term.Len() != 0 {
				t.Errorf("reached the terminal: %q", term.String())
			}
		})
	}
}
