package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria"
	"github.com/talaria-agent/talaria/models"
)

// runCron runs "talaria cron ARGS --db DSN" and returns its output and error.
func runCron(t *testing.T, dsn string, args ...string) (string, error) {
	t.Helper()
	t.Setenv("TALARIA_HOME", t.TempDir())
	cmd := newCronCommand()
	registerGlobalFlags(cmd) // --db is a global flag of the root
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append(args, "--db", dsn))
	err := cmd.ExecuteContext(t.Context())
	return out.String(), err
}

func mustCron(t *testing.T, dsn string, args ...string) string {
	t.Helper()
	out, err := runCron(t, dsn, args...)
	if err != nil {
		t.Fatalf("cron %v: %v\n%s", args, err, out)
	}
	return out
}

func cronStore(t *testing.T) string {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "talaria.db")
	mustCron(t, dsn, "add", "--name", "nightly", "--schedule", "0 9 * * *", "--prompt", "summarise\nthe alerts",
		"--deliver", "local", "--tools", "read_file,todo")
	return dsn
}

func TestCronPauseResumeWording(t *testing.T) {
	dsn := cronStore(t)
	if out := mustCron(t, dsn, "pause", "nightly"); out != "paused nightly\n" {
		t.Fatalf("pause said %q", out)
	}
	if out := mustCron(t, dsn, "resume", "nightly"); out != "resumed nightly\n" {
		t.Fatalf("resume said %q", out)
	}
}

func TestCronShowText(t *testing.T) {
	dsn := cronStore(t)
	out := mustCron(t, dsn, "show", "nightly")
	for _, want := range []string{
		"job nightly (",
		"  schedule:       0 9 * * * (UTC)\n",
		"  enabled:        true\n",
		"  prompt:         summarise\n                  the alerts\n",
		"  tools:          read_file, todo\n",
		"  deliver:        local\n",
		"  catch-up:       last, window 1h0m0s\n",
		"  last slot:      -\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "3600000000000") || strings.Contains(out, "CatchUpWindow") {
		t.Errorf("show prints a raw struct:\n%s", out)
	}
	var next string
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "  next run:"); ok {
			next = strings.TrimSpace(v)
		}
	}
	if ts, err := time.Parse(time.RFC3339, next); err != nil || ts.Hour() != 9 || ts.Minute() != 0 {
		t.Errorf("next run %q is not the 09:00 slot in RFC 3339 (%v)", next, err)
	}
}

func TestCronShowJSON(t *testing.T) {
	dsn := cronStore(t)
	for _, flag := range [][]string{{"--json"}, {"-o", "json"}, {"--output=json"}} {
		out := mustCron(t, dsn, append([]string{"show", "nightly"}, flag...)...)
		var raw map[string]any
		if err := json.Unmarshal([]byte(out), &raw); err != nil {
			t.Fatalf("%v: %v\n%s", flag, err, out)
		}
		if raw["catch_up_window"] != "1h0m0s" || raw["name"] != "nightly" || raw["enabled"] != true || raw["catch_up"] != "last" {
			t.Errorf("%v: %v", flag, raw)
		}
		if tools, _ := raw["tools"].([]any); len(tools) != 2 || tools[0] != "read_file" {
			t.Errorf("%v: tools %v", flag, raw["tools"])
		}
		for k := range raw {
			if k != strings.ToLower(k) {
				t.Errorf("%v: key %q is not snake_case", flag, k)
			}
		}
		if _, err := time.Parse(time.RFC3339, raw["next_run"].(string)); err != nil {
			t.Errorf("%v: next_run %v", flag, raw["next_run"])
		}
	}
	if _, err := runCron(t, dsn, "show", "nightly", "-o", "yaml"); err == nil || !strings.Contains(err.Error(), "use text or json") {
		t.Fatalf("-o yaml: %v", err)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(mustCron(t, dsn, "list", "--json")), &list); err != nil || len(list) != 1 || list[0]["catch_up_window"] != "1h0m0s" {
		t.Fatalf("list --json: %v %v", err, list)
	}
}

func TestCronRunsWholeAndJSON(t *testing.T) {
	dsn := cronStore(t)
	ctx := t.Context()
	st, err := models.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	j, err := st.CronJob(ctx, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	long := "/home/someone/.talaria/cron/output/nightly/" + strings.Repeat("deep/", 20) + "2026-12-01T09-00-00Z.md"
	errText := "webhook http://alerts.example.com/hook: 503 Service Unavailable: " + strings.Repeat("down for maintenance ", 8) + "END"
	slot := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	if _, err := st.RecordRun(ctx, models.CronRun{JobID: j.ID, ScheduledAt: slot, Status: models.RunFailed,
		ExitReason: "text_response", Delivery: "local: " + long, Error: errText}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	out := mustCron(t, dsn, "runs", "nightly")
	for _, want := range []string{"2026-12-01T09:00:00Z  failed     text_response\n", "    delivery: local: " + long + "\n", "    error:    " + errText + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("runs lacks %q:\n%s", want, out)
		}
	}
	var runs []map[string]any
	if err := json.Unmarshal([]byte(mustCron(t, dsn, "runs", "nightly", "--json")), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("runs --json: %v %v", err, runs)
	}
	if runs[0]["error"] != errText || runs[0]["status"] != "failed" || runs[0]["scheduled_at"] != "2026-12-01T09:00:00Z" {
		t.Fatalf("runs --json: %v", runs[0])
	}
}

func TestCronRefusesUnknownTools(t *testing.T) {
	dsn := cronStore(t)
	tests := []struct {
		name string
		args []string
	}{
		{"add", []string{"add", "--name", "x", "--schedule", "@daily", "--prompt", "p", "--tools", "read_file,nosuchtool"}},
		{"edit", []string{"edit", "nightly", "--tools", "nosuchtool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCron(t, dsn, tt.args...)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.Contains(msg, `"nosuchtool"`) || !strings.Contains(msg, "terminal") || strings.Contains(msg, "\n") {
				t.Fatalf("err = %q", msg)
			}
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitUsage {
				t.Fatalf("not a usage error: %#v", err)
			}
		})
	}
	if out := mustCron(t, dsn, "show", "nightly"); !strings.Contains(out, "tools:          read_file, todo\n") {
		t.Fatalf("a refused edit changed the job:\n%s", out)
	}
	mustCron(t, dsn, "edit", "nightly", "--tools", "memory,session_search,clarify")
}

func TestCheckToolNames(t *testing.T) {
	tests := []struct {
		names []string
		ok    bool
	}{
		{nil, true},
		{[]string{"read_file", "write_file", "terminal", "todo", "clarify", "memory", "session_search"}, true},
		{[]string{"Terminal"}, false},
		{[]string{"terminal", ""}, false},
		{[]string{"rm -rf"}, false},
		{[]string{"mcp:docs", "mcp_docs_search", "web"}, true},
		{[]string{"mcp:"}, false},
	}
	for _, tt := range tests {
		if err := talaria.CheckCronTools(tt.names); (err == nil) != tt.ok {
			t.Errorf("CheckCronTools(%q) = %v, want ok=%v", tt.names, err, tt.ok)
		}
	}
}

func TestIndentLines(t *testing.T) {
	tests := []struct{ in, want string }{
		{"one", "one"},
		{"a\nb", "a\n  b"},
		{"a\r\nb\n", "a\n  b"},
	}
	for _, tt := range tests {
		if got := indentLines(tt.in, "  "); got != tt.want {
			t.Errorf("indentLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
