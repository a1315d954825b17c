package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// answering is a fake model that answers every request with text.
func answering(text string) *fakellm.Server {
	return fakellm.New(fakellm.WithResponder(func(fakellm.Request) fakellm.Step { return fakellm.TextStep(text) }))
}

// TestPolishCron: cron add without a running scheduler saves the job and
// warns in one line (and not once serve runs); a job without --deliver
// delivers locally; run-now twice in a minute runs twice and names each
// run; cron output prints a run's answer; cron edit without flags opens
// the prompt in an $EDITOR that has arguments.
func TestPolishCron(t *testing.T) {
	t.Parallel()
	model := answering("Digest: all quiet.")
	defer model.Close()
	u := newUser(t, model.URL())

	out, stderr, code := u.run(time.Minute, "cron", "add", "--name", "digest", "--schedule", "@daily", "--prompt", "summarise the alerts")
	if code != 0 || !strings.Contains(out, "added job digest") {
		t.Fatalf("cron add: exit %d %s%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "no scheduler is running") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("cron add without serve: want one warning line, got:\n%s", stderr)
	}
	if out, _, _ := u.run(time.Minute, "cron", "show", "digest"); !strings.Contains(out, "deliver:        local\n") {
		t.Fatalf("a job added without --deliver:\n%s", out)
	}

	u.serve(0)
	if _, stderr, code := u.run(time.Minute, "cron", "add", "--name", "other", "--schedule", "@daily", "--prompt", "x"); code != 0 || stderr != "" {
		t.Fatalf("cron add with serve running: exit %d, stderr:\n%s", code, stderr)
	}
	started := regexp.MustCompile(`^started (cron/\S+): run (\S+) of digest \(`)
	var slots []string
	for range 2 {
		out, stderr, code := u.run(time.Minute, "cron", "run-now", "digest")
		m := started.FindStringSubmatch(out)
		if code != 0 || m == nil || stderr != "" {
			t.Fatalf("run-now: exit %d\n%s%s", code, out, stderr)
		}
		slots = append(slots, m[2])
	}
	if slots[0] == slots[1] {
		t.Fatalf("two run-nows started one run %s", slots[0])
	}
	var runs []struct {
		ScheduledAt time.Time `json:"scheduled_at"`
		Status      string    `json:"status"`
		Delivery    string    `json:"delivery"`
	}
	waitFor(t, 90*time.Second, func() bool {
		out, _, _ := u.run(time.Minute, "cron", "runs", "digest", "-o", "json")
		runs = nil
		if json.Unmarshal([]byte(out), &runs) != nil || len(runs) != 2 {
			return false
		}
		return runs[0].Status != "started" && runs[1].Status != "started"
	})
	for _, r := range runs {
		if r.Status != "completed" || !strings.Contains(r.Delivery, "local → ") {
			t.Fatalf("runs: %+v", runs)
		}
	}
	files, _ := filepath.Glob(filepath.Join(u.home, "cron", "output", "digest", "*.md"))
	if len(files) != 2 {
		t.Fatalf("local deliveries: %v", files)
	}
	if out, stderr, code := u.run(time.Minute, "cron", "output", "digest"); code != 0 || out != "Digest: all quiet.\n" {
		t.Fatalf("cron output: exit %d %q %s", code, out, stderr)
	}
	if out, stderr, code := u.run(time.Minute, "cron", "output", "digest", slots[0]); code != 0 || out != "Digest: all quiet.\n" {
		t.Fatalf("cron output of %s: exit %d %q %s", slots[0], code, out, stderr)
	}

	// An editor given with arguments edits the prompt.
	u.env["EDITOR"] = "sed -i s/summarise/condense/"
	if out, stderr, code := u.run(time.Minute, "cron", "edit", "digest"); code != 0 || !strings.Contains(out, "updated digest") {
		t.Fatalf("cron edit in $EDITOR: exit %d %s%s", code, out, stderr)
	}
	if out, _, _ := u.run(time.Minute, "cron", "show", "digest"); !strings.Contains(out, "prompt:         condense the alerts\n") {
		t.Fatalf("the edited prompt:\n%s", out)
	}
	u.env["EDITOR"] = "vi 'unclosed"
	if _, stderr, code := u.run(time.Minute, "cron", "edit", "digest"); code != 2 || !strings.Contains(stderr, "$EDITOR") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("an unparsable $EDITOR: exit %d\n%s", code, stderr)
	}
}

// TestPolishSessions: sessions search finds the words of a query apart
// (quotes keep a phrase); show, search and memory show print snake_case
// JSON with -o json; memory edit takes an $EDITOR with arguments; the
// memory-review session made after ten turns is listed only with --all.
func TestPolishSessions(t *testing.T) {
	t.Parallel()
	model := answering("noted")
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	for i := 1; i <= 10; i++ {
		text := fmt.Sprintf("step %d", i)
		if i == 1 {
			text = "I finished the migration; the next plan is a review"
		}
		if _, stderr, code := u.run(time.Minute, "chat", "-q", text, "--session", "work"); code != 0 {
			t.Fatalf("turn %d: exit %d %s", i, code, stderr)
		}
	}
	out, stderr, code := u.run(time.Minute, "sessions", "search", "finished", "plan")
	if code != 0 || !strings.Contains(out, "» user: I finished the migration") {
		t.Fatalf("search for two words apart: exit %d\n%s%s", code, out, stderr)
	}
	if out, _, code := u.run(time.Minute, "sessions", "search", `"finished plan"`); code != 0 || strings.TrimSpace(out) != "no matches" {
		t.Fatalf("a quoted phrase matched words apart: exit %d\n%s", code, out)
	}
	out, _, code = u.run(time.Minute, "sessions", "search", "migration", "-o", "json")
	var groups []struct {
		LineageID string `json:"lineage_id"`
		Hits      []struct {
			Message struct {
				SessionID string `json:"session_id"`
				Content   string `json:"content"`
			} `json:"message"`
		} `json:"hits"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &groups) != nil || len(groups) != 1 || groups[0].Hits[0].Message.SessionID != "work" {
		t.Fatalf("search -o json: exit %d\n%s", code, out)
	}
	assertSnakeCaseJSON(t, out)
	out, _, code = u.run(time.Minute, "sessions", "show", "work", "-o", "json")
	var shown struct {
		Session struct {
			ID        string `json:"id"`
			TurnCount int    `json:"turn_count"`
		} `json:"session"`
		Turns    []struct{ Status string } `json:"turns"`
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &shown) != nil || shown.Session.ID != "work" || shown.Session.TurnCount != 10 ||
		len(shown.Turns) != 10 || len(shown.Messages) < 20 {
		t.Fatalf("show -o json: exit %d\n%.2000s", code, out)
	}
	assertSnakeCaseJSON(t, out)

	// The tenth turn made a memory review in a session of its own.
	waitFor(t, time.Minute, func() bool {
		out, _, _ := u.run(time.Minute, "sessions", "list", "--all")
		return strings.Contains(out, "review.work.10")
	})
	if out, _, _ := u.run(time.Minute, "sessions", "list"); strings.Contains(out, "review.") || !strings.Contains(out, "work") {
		t.Fatalf("sessions list shows a memory review (or lost the conversation):\n%s", out)
	}

	// memory edit with an editor that has arguments; memory show -o json.
	src := filepath.Join(u.workdir, "notes.md")
	if err := os.WriteFile(src, []byte("likes tea\n§\nworks at night\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u.env["EDITOR"] = "cp " + src
	if _, stderr, code := u.run(time.Minute, "memory", "edit", "--user"); code != 0 {
		t.Fatalf("memory edit: exit %d %s", code, stderr)
	}
	out, _, code = u.run(time.Minute, "memory", "show", "-o", "json")
	var mem []struct {
		Kind    string `json:"kind"`
		Entries []struct {
			Text   string `json:"text"`
			Loaded bool   `json:"loaded"`
		} `json:"entries"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &mem) != nil || len(mem) != 2 || mem[1].Kind != "user" || len(mem[1].Entries) != 2 ||
		mem[1].Entries[0].Text != "likes tea" || !mem[1].Entries[0].Loaded {
		t.Fatalf("memory show -o json: exit %d\n%s", code, out)
	}
	assertSnakeCaseJSON(t, out)
}

// assertSnakeCaseJSON fails when a key of the JSON document doc is not
// snake_case.
func assertSnakeCaseJSON(t *testing.T, doc string) {
	t.Helper()
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k != strings.ToLower(k) || strings.ContainsAny(k, "- ") {
					t.Errorf("key %q is not snake_case", k)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	walk(v)
}
