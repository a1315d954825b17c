package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// cronAt runs "talaria cron ARGS --db DSN" with TALARIA_HOME set to home.
func cronAt(t *testing.T, home, dsn string, args ...string) (string, error) {
	t.Helper()
	t.Setenv("TALARIA_HOME", home)
	cmd := newCronCommand()
	registerGlobalFlags(cmd)
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append(args, "--db", dsn))
	err := cmd.ExecuteContext(t.Context())
	return out.String(), err
}

func TestParseRunRef(t *testing.T) {
	tests := []struct {
		ref, want string
		ok        bool
	}{
		{"2026-03-01T09:00:00Z", "2026-03-01T09:00:00Z", true},
		{"2026-03-01T10:00:05+01:00", "2026-03-01T09:00:05Z", true},
		{"cron/j1/2026-03-01T09:00:00Z", "2026-03-01T09:00:00Z", true},
		{" 2026-03-01T09:00:00Z ", "2026-03-01T09:00:00Z", true},
		{"cron/other/2026-03-01T09:00:00Z", "", false},
		{"yesterday", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, err := parseRunRef("j1", tt.ref)
		if (err == nil) != tt.ok || (tt.ok && got.Format(time.RFC3339) != tt.want) {
			t.Errorf("parseRunRef(%q) = %s, %v; want %s (ok %v)", tt.ref, got, err, tt.want, tt.ok)
		}
	}
}

func TestLocalOutputText(t *testing.T) {
	tests := []struct{ file, want string }{
		{"# nightly — 2026-03-01T09:00:00Z\n\ndisk 42% full\n\nmore\n", "disk 42% full\n\nmore\n"},
		{"no heading\n\nat all\n", "no heading\n\nat all\n"},
		{"# heading only\n", "# heading only\n"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := localOutputText(tt.file); got != tt.want {
			t.Errorf("localOutputText(%q) = %q, want %q", tt.file, got, tt.want)
		}
	}
}

// TestCronOutput: a job added without --deliver delivers locally; `cron
// output` prints a run's answer from its session (whatever the job's
// targets: a job stored with none, from before the default, included),
// falls back to the local file of a script-only run, and names the reason
// when a run has no output.
func TestCronOutput(t *testing.T) {
	home := t.TempDir()
	dsn := filepath.Join(t.TempDir(), "talaria.db")
	if out, err := cronAt(t, home, dsn, "add", "--name", "digest", "--schedule", "@daily", "--prompt", "summarise"); err != nil {
		t.Fatalf("cron add: %v\n%s", err, out)
	}
	if out, _ := cronAt(t, home, dsn, "show", "digest"); !strings.Contains(out, "deliver:        local\n") {
		t.Fatalf("a job added without --deliver does not deliver locally:\n%s", out)
	}
	if _, err := cronAt(t, home, dsn, "output", "digest"); exitCode(err) != exitFailure || !strings.Contains(err.Error(), "no finished run") {
		t.Fatalf("output of a job that never ran: %v", err)
	}

	ctx := t.Context()
	st, err := models.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	// A job from before the default: no delivery targets at all.
	legacy, err := st.CreateCronJob(ctx, models.CronJob{ID: "old1", Name: "legacy", Schedule: "@hourly", Prompt: "p", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	first := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	second := time.Date(2026, 3, 1, 10, 0, 7, 0, time.UTC) // a run-now slot
	for i, slot := range []time.Time{first, second} {
		ended := slot.Add(time.Minute)
		run := models.CronRun{JobID: legacy.ID, ScheduledAt: slot, WorkflowID: "cron/old1/" + slot.Format(time.RFC3339),
			Status: models.RunCompleted, EndedAt: &ended}
		if _, err := st.RecordRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		err := st.UpsertTurn(ctx, models.Turn{ID: "turn" + string(rune('a'+i)), SessionID: workflows.CronSessionID(legacy.ID, slot),
			Number: 1, Status: "completed", FinalResponse: "answer of " + slot.Format(time.RFC3339) + "\nline two", StartedAt: slot, EndedAt: &ended})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A script-only run: its output is only in the local file.
	third := time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)
	ended := third.Add(time.Second)
	if _, err := st.RecordRun(ctx, models.CronRun{JobID: legacy.ID, ScheduledAt: third, Status: models.RunCompleted, EndedAt: &ended}); err != nil {
		t.Fatal(err)
	}
	path := activities.LocalOutputPath(home, "legacy", third)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("# legacy — 2026-03-01T11:00:00Z\n\ndisk 42% full\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A failed run without output.
	fourth := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	if _, err := st.RecordRun(ctx, models.CronRun{JobID: legacy.ID, ScheduledAt: fourth, Status: models.RunFailed, EndedAt: &ended,
		Error: "model call failed: HTTP 500"}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	tests := []struct {
		args []string
		want string
		code int
	}{
		{[]string{"output", "legacy"}, "disk 42% full\n", 0}, // the latest run that ended
		{[]string{"output", "legacy", "2026-03-01T09:00:00Z"}, "answer of 2026-03-01T09:00:00Z\nline two\n", 0},
		{[]string{"output", "old1", "cron/old1/2026-03-01T10:00:07Z"}, "answer of 2026-03-01T10:00:07Z\nline two\n", 0},
		{[]string{"output", "legacy", "2026-03-01T08:00:00Z"}, "HTTP 500", exitFailure},
		{[]string{"output", "legacy", "2026-03-02T08:00:00Z"}, "has no run at 2026-03-02T08:00:00Z", exitFailure},
		{[]string{"output", "legacy", "tomorrow"}, "give its slot", exitUsage},
	}
	for _, tt := range tests {
		out, err := cronAt(t, home, dsn, tt.args...)
		if code := exitCode(err); code != tt.code {
			t.Errorf("cron %v: exit %d (%v), want %d\n%s", tt.args, code, err, tt.code, out)
			continue
		}
		got := out
		if err != nil {
			got = err.Error()
			if strings.Contains(got, "\n") {
				t.Errorf("cron %v: the error is more than one line: %q", tt.args, got)
			}
		}
		if (tt.code == 0 && got != tt.want) || !strings.Contains(got, tt.want) {
			t.Errorf("cron %v = %q, want %q", tt.args, got, tt.want)
		}
	}
	if out, _ := cronAt(t, home, dsn, "runs", "legacy"); !strings.Contains(out, "a run's answer: talaria cron output legacy 2026-03-01T11:00:00Z\n") {
		t.Errorf("cron runs does not tell how to read an answer:\n%s", out)
	}
	out, err := cronAt(t, home, dsn, "output", "legacy", "2026-03-01T09:00:00Z", "-o", "json")
	var v cronOutputView
	if err != nil || json.Unmarshal([]byte(out), &v) != nil || v.Source != "session" || v.SessionID != workflows.CronSessionID("old1", first) {
		t.Fatalf("output -o json: %v %+v\n%s", err, v, out)
	}
	assertSnakeCase(t, out)
}

// exitCode is the exit status err leads to (0 for nil).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return exitFailure
}
