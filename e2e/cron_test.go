package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestCronJobRunsAndDelivers: a job's slot runs through the real workflow
// with the scripted model; local delivery writes the file, a loopback webhook
// receives the POST, a failing webhook is retried and then recorded as
// failed — all visible in `talaria cron runs`.
func TestCronJobRunsAndDelivers(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("Overnight summary: all quiet."))
	defer model.Close()
	var mu sync.Mutex
	var posted map[string]any
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		_ = json.Unmarshal(body, &posted)
		mu.Unlock()
	}))
	defer ok.Close()
	failures := 0
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		failures++
		mu.Unlock()
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	defer failing.Close()

	u := newUser(t, model.URL())
	u.serve(0)
	out, stderr, code := u.run(time.Minute, "cron", "add", "--name", "nightly", "--schedule", "0 9 * * *",
		"--prompt", "summarise the overnight alerts", "--deliver", "local",
		"--deliver", "webhook:"+ok.URL, "--deliver", "webhook:"+failing.URL)
	if code != 0 || !strings.Contains(out, "added job nightly") {
		t.Fatalf("cron add: exit %d %s%s", code, out, stderr)
	}
	if out, stderr, code := u.run(time.Minute, "cron", "run-now", "nightly"); code != 0 || !strings.Contains(out, "started cron/") {
		t.Fatalf("run-now: exit %d %s%s", code, out, stderr)
	}
	var runs string
	waitFor(t, 90*time.Second, func() bool {
		runs, _, _ = u.run(time.Minute, "cron", "runs", "nightly")
		return strings.Contains(runs, "failed") || strings.Contains(runs, "completed")
	})
	if !strings.Contains(runs, "failed") || !strings.Contains(runs, "text_response") || !strings.Contains(runs, "503") {
		t.Fatalf("cron runs:\n%s", runs)
	}
	files, _ := filepath.Glob(filepath.Join(u.home, "cron", "output", "nightly", "*.md"))
	if len(files) != 1 {
		t.Fatalf("local deliveries: %v", files)
	}
	if data, _ := os.ReadFile(files[0]); !strings.Contains(string(data), "Overnight summary: all quiet.") {
		t.Fatalf("delivered file:\n%s", data)
	}
	mu.Lock()
	defer mu.Unlock()
	if posted["text"] != "Overnight summary: all quiet." || posted["job"] != "nightly" {
		t.Fatalf("webhook got %v", posted)
	}
	if failures < 2 {
		t.Fatalf("the failing webhook was tried %d times, want retries", failures)
	}
	// Jobs can be edited, paused and resumed, and are listed.
	if out, stderr, code := u.run(time.Minute, "cron", "edit", "nightly", "--schedule", "@hourly", "--tools", "read_file,todo"); code != 0 || !strings.Contains(out, "updated") {
		t.Fatalf("cron edit: exit %d %s%s", code, out, stderr)
	}
	if out, stderr, code := u.run(time.Minute, "cron", "pause", "nightly"); code != 0 || out != "paused nightly\n" {
		t.Fatalf("cron pause: exit %d %q %s", code, out, stderr)
	}
	if out, _, _ := u.run(time.Minute, "cron", "list"); !strings.Contains(out, "@hourly") || !strings.Contains(out, "false") {
		t.Fatalf("cron list after edit and pause:\n%s", out)
	}
	if out, _, _ := u.run(time.Minute, "cron", "show", "nightly"); !strings.Contains(out, "tools:          read_file, todo\n") ||
		!strings.Contains(out, "window 1h0m0s") {
		t.Fatalf("cron show:\n%s", out)
	}
	if out, _, _ := u.run(time.Minute, "cron", "runs", "nightly", "--json"); !strings.Contains(out, `"exit_reason": "text_response"`) {
		t.Fatalf("cron runs --json:\n%s", out)
	}
	if _, stderr, code := u.run(time.Minute, "cron", "edit", "nightly", "--tools", "nosuchtool"); code != 2 || !strings.Contains(stderr, `"nosuchtool"`) {
		t.Fatalf("unknown tool: exit %d %s", code, stderr)
	}
	if _, stderr, code := u.run(time.Minute, "cron", "edit", "nightly", "--schedule", "0 25 * * *"); code != 2 {
		t.Fatalf("invalid edit: exit %d %s", code, stderr)
	}
	// Bad schedules are refused at creation.
	if _, stderr, code := u.run(time.Minute, "cron", "add", "--name", "bad", "--schedule", "every blue moon", "--prompt", "x"); code != 2 || !strings.Contains(stderr, "schedule") {
		t.Fatalf("bad schedule: exit %d %s", code, stderr)
	}
}
