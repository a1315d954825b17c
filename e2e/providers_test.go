package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestFallbackFromOpenAIToAnthropicMidTurn (issue #19, criterion 3): the
// primary speaks chat completions; it makes two calls at once, then
// refuses the key. The turn goes on with the fallback, which speaks
// Anthropic Messages with extended thinking on, through the real binary.
// The Anthropic fake checks every request as the API does (roles
// alternate, each tool_use answered by a tool_result in the next message,
// a tool-use loop's assistant message starts with a signed thinking block
// when thinking is on); every request must pass. The earlier calls and
// results reach the fallback paired. The tool-use loop the other format
// began goes on without thinking (its assistant message has no signed
// thinking block, and the API does not let thinking start mid-loop); the
// next turn, on the fallback again, thinks, and its tool-use message goes
// back with the thinking block the fallback signed. The turn's usage
// carries the fallback's cost.
func TestFallbackFromOpenAIToAnthropicMidTurn(t *testing.T) {
	t.Parallel()
	primary := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{Name: "read_file", Arguments: `{"path":"a.txt"}`},
			fakellm.ToolCall{Name: "read_file", Arguments: `{"path":"b.txt"}`}),
		fakellm.Step{Status: 401, ErrorMessage: "key revoked"},
		fakellm.Step{Status: 401, ErrorMessage: "key revoked"},
	)
	defer primary.Close()
	fallback := fakellm.New(
		fakellm.Step{Reasoning: "Both files are read; c.txt is next.", ToolCalls: []fakellm.ToolCall{{Name: "read_file", Arguments: `{"path":"c.txt"}`}}},
		fakellm.TextStep("A, B and C are read."),
		fakellm.Step{Reasoning: "The user wants a.txt again.", ToolCalls: []fakellm.ToolCall{{Name: "read_file", Arguments: `{"path":"a.txt"}`}}},
		fakellm.TextStep("Read a again."),
	)
	defer fallback.Close()
	u := newUser(t, primary.URL())
	u.env["TALARIA_MODEL"] = "gpt-4o-mini"
	// ANTHROPIC_API_KEY is not for an Anthropic-compatible endpoint
	// elsewhere: the fallback names its own key.
	u.env["ANTHROPIC_API_KEY"] = "not-for-this-endpoint"
	writeConfig("tools:\n  enabled: [read_file]\nfallback_providers:\n  - provider: anthropic\n    base_url: "+fallback.URL()+
		"\n    api_key: anthropic-key\n    model: claude-sonnet-4-5\n    thinking_budget: 2048\n")(t, u)
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		if err := os.WriteFile(filepath.Join(u.workdir, f), []byte("contents of "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	res, stderr, code := u.chatJSON(2*time.Minute, "-q", "read a, b and c", "--session", "mixed")
	if code != 0 || !res.Completed || res.FinalResponse == nil || *res.FinalResponse != "A, B and C are read." {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	res2, stderr, code := u.chatJSON(2*time.Minute, "-q", "read a again", "--session", "mixed")
	if code != 0 || !res2.Completed || res2.FinalResponse == nil || *res2.FinalResponse != "Read a again." {
		t.Fatalf("second turn: exit %d, result %+v\n%s", code, res2, stderr)
	}
	reqs := fallback.Requests()
	if len(reqs) != 4 {
		t.Fatalf("fallback requests = %d, want 4", len(reqs))
	}
	for i, r := range reqs {
		if r.Wire != fakellm.WireAnthropic || r.Status != 200 {
			t.Fatalf("fallback request %d: wire %s, status %d (refused: the transcript was not valid)", i, r.Wire, r.Status)
		}
		if got := r.Header.Get("X-Api-Key"); got != "anthropic-key" {
			t.Fatalf("fallback request %d sent key %q", i, got)
		}
	}
	// The first request continues the primary's calls: both results in one
	// user message, each paired with its call; no thinking, in this loop.
	first := nativeRequest(t, reqs[0].Raw)
	if n := countBlocks(first, "user", "tool_result"); n != 2 {
		t.Fatalf("first fallback request carries %d tool results, want 2: %s", n, reqs[0].Raw)
	}
	for i := 0; i < 2; i++ {
		if nativeRequest(t, reqs[i].Raw).Thinking != nil {
			t.Fatalf("fallback request %d has thinking on in a loop begun without it: %s", i, reqs[i].Raw)
		}
	}
	// The next turn starts with the user: thinking on; its tool-use message
	// goes back led by the thinking block the fallback signed.
	if nativeRequest(t, reqs[2].Raw).Thinking == nil {
		t.Fatalf("the second turn's first request has thinking off: %s", reqs[2].Raw)
	}
	fourth := nativeRequest(t, reqs[3].Raw)
	if fourth.Thinking == nil {
		t.Fatalf("the second turn's second request has thinking off: %s", reqs[3].Raw)
	}
	last := fourth.Messages[len(fourth.Messages)-2]
	if last.Role != "assistant" || len(last.Content) == 0 || last.Content[0].Type != "thinking" || last.Content[0].Signature == "" {
		t.Fatalf("the fallback's tool-use message is not replayed with its thinking block: %s", reqs[3].Raw)
	}
	msgs := u.shownMessages("mixed")
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "user,assistant,tool,tool,assistant,tool,assistant,user,assistant,tool,assistant" {
		t.Fatalf("transcript = %s", got)
	}
	if res.Usage.CostUSD <= 0 {
		t.Fatalf("usage = %+v: the fallback's calls have a price", res.Usage)
	}
	// talaria usage sums the recorded calls by provider and model: the
	// primary's one answer and the fallback's four.
	out, stderr, code := u.run(time.Minute, "usage", "--session", "mixed", "--since", "7d", "-o", "json")
	if code != 0 {
		t.Fatalf("usage: exit %d %s", code, stderr)
	}
	var report struct {
		Models []struct {
			Provider string  `json:"provider"`
			Model    string  `json:"model"`
			Calls    int     `json:"calls"`
			Cost     float64 `json:"cost_usd"`
		} `json:"models"`
		Total struct {
			Calls int     `json:"calls"`
			Cost  float64 `json:"cost_usd"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("usage -o json: %v\n%s", err, out)
	}
	calls := map[string]int{}
	for _, m := range report.Models {
		calls[m.Provider+" "+m.Model] = m.Calls
	}
	if calls["anthropic claude-sonnet-4-5"] != 4 || calls["openai gpt-4o-mini"] != 1 || report.Total.Calls != 5 {
		t.Fatalf("usage = %s", out)
	}
	if want := res.Usage.CostUSD + res2.Usage.CostUSD; report.Total.Cost < want*0.999 || report.Total.Cost > want*1.001 {
		t.Fatalf("usage total cost %v, the turns' %v", report.Total.Cost, want)
	}
	text, _, code := u.run(time.Minute, "usage")
	if code != 0 || !strings.Contains(text, "claude-sonnet-4-5") || !strings.Contains(text, "CACHE READ") {
		t.Fatalf("usage text:\n%s", text)
	}
	if _, stderr, code := u.run(time.Minute, "usage", "--since", "soon"); code != 2 || !strings.Contains(stderr, "--since") {
		t.Fatalf("a bad --since: exit %d %s", code, stderr)
	}
}

// anthropicRequest is what the test reads of a Messages request.
type anthropicRequest struct {
	Thinking *struct {
		Type string `json:"type"`
	} `json:"thinking"`
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Type      string `json:"type"`
			Signature string `json:"signature"`
		} `json:"content"`
	} `json:"messages"`
}

func nativeRequest(t *testing.T, raw []byte) anthropicRequest {
	t.Helper()
	var r anthropicRequest
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("request is not a Messages request: %v\n%s", err, raw)
	}
	return r
}

// countBlocks counts the blocks of a type in the messages of a role.
func countBlocks(r anthropicRequest, role, typ string) int {
	n := 0
	for _, m := range r.Messages {
		for _, c := range m.Content {
			if m.Role == role && c.Type == typ {
				n++
			}
		}
	}
	return n
}
