package activities

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/approval"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/transcript"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

func TestBoundCalls(t *testing.T) {
	calls := func(n int, id func(int) string) []models.ToolCall {
		out := make([]models.ToolCall, n)
		for i := range out {
			out[i] = models.ToolCall{ID: id(i), Function: models.FunctionCall{Name: "todo", Arguments: "{}"}}
		}
		return out
	}
	plain := func(i int) string { return fmt.Sprintf("call_%d", i) }
	cases := []struct {
		name    string
		in      []models.ToolCall
		want    int
		changed bool // ids replaced
	}{
		{"a hundred calls are kept", calls(100, plain), 100, false},
		{"more are cut to the bound", calls(1000, plain), MaxCallsPerReply, false},
		{"NUL ids get a digest", calls(3, func(i int) string { return fmt.Sprintf("id\x00%d", i) }), 3, true},
		{"invalid UTF-8 ids get a digest", calls(3, func(i int) string { return fmt.Sprintf("id\xff%d", i) }), 3, true},
		{"quotes get a digest", calls(2, func(i int) string { return fmt.Sprintf(`id"%d`, i) }), 2, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := make([]string, len(c.in))
			for i, tc := range c.in {
				before[i] = tc.ID
			}
			got := BoundCalls(c.in)
			if len(got) != c.want {
				t.Fatalf("%d calls kept, want %d", len(got), c.want)
			}
			seen := map[string]bool{}
			for i, tc := range got {
				if (tc.ID != before[i]) != c.changed {
					t.Fatalf("id %q became %q", before[i], tc.ID)
				}
				if turnapi.JSONLen(tc.ID) != len(tc.ID) || seen[tc.ID] {
					t.Fatalf("id %q is not plain or not unique", tc.ID)
				}
				seen[tc.ID] = true
			}
			if c.changed {
				again := BoundCalls([]models.ToolCall{{ID: before[0]}})
				if again[0].ID != got[0].ID {
					t.Fatalf("the digest id is not stable: %q then %q", got[0].ID, again[0].ID)
				}
			}
		})
	}
}

// TestRefsOfAFullBatchStaySmall: a reply with the most calls a reply keeps,
// each as large as a ref of its kind gets, describes within the budget;
// every clarify call still shows a question and a choice.
func TestRefsOfAFullBatchStaySmall(t *testing.T) {
	choices := make([]string, 30)
	for i := range choices {
		choices[i] = strings.Repeat("\x01", 2000)
	}
	clarify, _ := json.Marshal(map[string]any{"question": strings.Repeat("\x02?", 5000), "choices": choices})
	terminal, _ := json.Marshal(map[string]string{"command": "rm -rf ./" + strings.Repeat("\x03", 5000)})
	kinds := []struct{ name, args string }{
		{tools.ClarifyName, string(clarify)},
		{"terminal", string(terminal)},
		{strings.Repeat("\x04", 5000), "{}"},
	}
	for _, k := range kinds {
		t.Run(fmt.Sprintf("%.20q", k.name), func(t *testing.T) {
			calls := make([]models.ToolCall, MaxCallsPerReply)
			for i := range calls {
				calls[i] = models.ToolCall{ID: fmt.Sprintf("call_%03d_%s", i, strings.Repeat("x", 119)), Function: models.FunctionCall{Name: k.name, Arguments: k.args}}
			}
			res := DescribeReplyIn(&models.Message{ID: 1, ToolCalls: calls}, []string{tools.ClarifyName, "terminal"}, approval.Where{})
			if n := encodedLen(res); n > turnapi.MaxPayloadBytes {
				t.Fatalf("the result encodes to %d bytes, above %d", n, turnapi.MaxPayloadBytes)
			}
			for _, r := range res.ToolCalls {
				if r.Name == tools.ClarifyName && (r.Question == "" || len(r.Choices) == 0) {
					t.Fatalf("a clarify call lost its question or choices: %+v", r)
				}
				if r.Name == "terminal" && r.Command == "" {
					t.Fatal("a dangerous command is not shown")
				}
			}
		})
	}
}

// TestBoundReplyTellsTheModel: a reply whose calls are cut says so in its
// stored text, which is what the model is sent back; a reply within the
// bound is stored as sent.
func TestBoundReplyTellsTheModel(t *testing.T) {
	calls := func(n int) []models.ToolCall {
		out := make([]models.ToolCall, n)
		for i := range out {
			out[i] = models.ToolCall{ID: fmt.Sprintf("call_%d", i), Type: "function", Function: models.FunctionCall{Name: "todo", Arguments: "{}"}}
		}
		return out
	}
	cases := []struct {
		name    string
		content string
		calls   int
		want    string
	}{
		{"within the bound", "reading", MaxCallsPerReply, "reading"},
		{"no calls", "the answer", 0, "the answer"},
		{"one too many", "reading", MaxCallsPerReply + 1,
			"reading\n\n[1 further tool calls were not run: at most 128 calls per reply]"},
		{"a thousand, no text", "", 1000, "[872 further tool calls were not run: at most 128 calls per reply]"},
		{"white space only", " \n", 200, "[72 further tool calls were not run: at most 128 calls per reply]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			content, kept := BoundReply(c.content, calls(c.calls))
			if content != c.want || len(kept) != min(c.calls, MaxCallsPerReply) {
				t.Fatalf("stored %q with %d calls, want %q with %d", content, len(kept), c.want, min(c.calls, MaxCallsPerReply))
			}
			wire := transcript.ToOpenAI([]models.Message{{Role: "assistant", Content: content, ToolCalls: kept}})
			if len(wire) != 1 || wire[0].Content != c.want || len(wire[0].ToolCalls) != len(kept) {
				t.Fatalf("the model is sent %+v", wire)
			}
		})
	}
}
