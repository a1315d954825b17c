package e2e

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/fakememory"
)

// mem0World is a fake model for a session with Mem0 on: asked about the
// editor, it calls mem0_search once and answers with what the search
// found; it records the requests.
type mem0World struct {
	mu   sync.Mutex
	sent []fakellm.Request
}

const (
	mem0Fact   = "The user's favourite editor is MEMFACT-HELIX"
	mem0Answer = "ANSWER-HELIX: you like Helix best."
)

func (w *mem0World) respond(req fakellm.Request) fakellm.Step {
	w.mu.Lock()
	w.sent = append(w.sent, req)
	w.mu.Unlock()
	msgs := req.Body.Messages
	last := msgs[len(msgs)-1]
	switch {
	case last.Role == "tool":
		return fakellm.TextStep(mem0Answer + " (search: " + last.Content + ")")
	case strings.Contains(last.Content, "which editor"):
		return fakellm.ToolStep(fakellm.ToolCall{Name: "mem0_search", Arguments: `{"query":"favourite editor"}`})
	}
	return fakellm.TextStep("noted")
}

// first is the first request whose messages hold text, all its messages
// joined, and the names of the tools it offered.
func (w *mem0World) first(text string) (string, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.sent {
		var all []string
		for _, m := range r.Body.Messages {
			all = append(all, m.Content)
		}
		if joined := strings.Join(all, "\n---\n"); strings.Contains(joined, text) {
			var names []string
			for _, t := range r.Body.Tools {
				if t.Function != nil {
					names = append(names, t.Function.Name)
				}
			}
			return joined, names
		}
	}
	return "", nil
}

// toolResult is the result of the tool call a request answered, "" when
// none did.
func (w *mem0World) toolResult() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.sent {
		for _, m := range r.Body.Messages {
			if m.Role == "tool" {
				return m.Content
			}
		}
	}
	return ""
}

// prefetchWarnings are the warning lines of serve.log about a prefetch
// that names provider.
func prefetchWarnings(t *testing.T, u *user, provider string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(readLog(t, u, "serve"), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, "prefetch") && strings.Contains(l, "provider="+provider) {
			out = append(out, l)
		}
	}
	return out
}

// TestMemoryMem0 runs serve with Mem0 as the memory provider, against a
// fake speaking Mem0's API: the first model request of a turn carries
// what Mem0 holds for the question, mem0_search is offered and called,
// and the turn's message and answer reach Mem0 after the turn. With Mem0
// slow past the prefetch budget, then down, a turn still completes, its
// first request without the block, and serve.log has one warning naming
// mem0 for it.
func TestMemoryMem0(t *testing.T) {
	t.Parallel()
	mem := fakememory.NewMem0("mem0-test-key")
	defer mem.Close()
	mem.Seed(fakememory.Mem0Memory{Memory: mem0Fact, UserID: "user", RunID: "older-session"})
	w := &mem0World{}
	model := fakellm.New(fakellm.WithResponder(w.respond))
	defer model.Close()
	u := newUser(t, model.URL())
	u.env["MEM0_TEST_KEY"] = "mem0-test-key"
	writeConfig("memory:\n  recall: true\n  provider: mem0\n  prefetch_budget: 3s\n  mem0:\n    base_url: "+mem.URL()+
		"\n    api_key_env: MEM0_TEST_KEY\n")(t, u)
	u.serve(0)

	const ask = "Remind me which editor is my favourite"
	out, stderr, code := u.run(2*time.Minute, "chat", "-q", ask, "--session", "helix")
	if code != 0 {
		t.Fatalf("chat helix: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(out, "ANSWER-HELIX") {
		t.Fatalf("the turn's answer: %s", out)
	}
	req, tools := w.first(ask)
	if !strings.Contains(req, "MEMFACT-HELIX") {
		t.Fatalf("the first request does not carry what Mem0 holds:\n%s", req)
	}
	if !strings.Contains(strings.Join(tools, " "), "mem0_search") {
		t.Fatalf("mem0_search is not offered: %v", tools)
	}
	if res := w.toolResult(); !strings.Contains(res, "MEMFACT-HELIX") {
		t.Fatalf("mem0_search's result: %q", res)
	}
	// After the turn, Mem0 is sent its message and its answer, filed under
	// the session.
	waitFor(t, time.Minute, func() bool {
		for _, r := range mem.RequestsTo("POST", "/v3/memories/add/") {
			var body struct {
				Messages []struct{ Role, Content string } `json:"messages"`
				RunID    string                           `json:"run_id"`
			}
			if r.JSON(&body) == nil && body.RunID == "helix" && len(body.Messages) == 2 &&
				body.Messages[0].Content == ask && strings.Contains(body.Messages[1].Content, "ANSWER-HELIX") {
				return true
			}
		}
		return false
	})

	// Slow: Mem0 holds every request past the budget.
	mem.Stall()
	const askSlow = "Tell me something about my slow editor habits"
	_, stderr, code = u.run(2*time.Minute, "chat", "-q", askSlow, "--session", "slow")
	if code != 0 {
		t.Fatalf("chat slow: exit %d\n%s", code, stderr)
	}
	// The person at the terminal is told, once, beside the answer.
	if n := strings.Count(stderr, "past conversations not recalled: mem0 did not answer within 3s"); n != 1 {
		t.Fatalf("chat slow told the skipped recall %d times, want once:\n%s", n, stderr)
	}
	if req, _ := w.first(askSlow); req == "" || strings.Contains(req, "MEMFACT-HELIX") || strings.Contains(req, "Related past") {
		t.Fatalf("the first request with Mem0 slow:\n%s", req)
	}
	if lines := prefetchWarnings(t, u, "mem0"); len(lines) != 1 || !strings.Contains(lines[0], "budget") {
		t.Fatalf("serve.log's prefetch warnings with Mem0 slow:\n%s", strings.Join(lines, "\n"))
	}

	// Down.
	mem.Close()
	const askDown = "Tell me something about my editor while it is down"
	if _, stderr, code := u.run(2*time.Minute, "chat", "-q", askDown, "--session", "down"); code != 0 {
		t.Fatalf("chat down: exit %d\n%s", code, stderr)
	}
	if req, _ := w.first(askDown); req == "" || strings.Contains(req, "MEMFACT-HELIX") || strings.Contains(req, "Related past") {
		t.Fatalf("the first request with Mem0 down:\n%s", req)
	}
	lines := prefetchWarnings(t, u, "mem0")
	if len(lines) != 2 || !strings.Contains(lines[1], "failed") || !strings.Contains(lines[1], "turn/down/") {
		t.Fatalf("serve.log's prefetch warnings with Mem0 down:\n%s", strings.Join(lines, "\n"))
	}
}
