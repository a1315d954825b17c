package activities

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/compress"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

func msg(id int64, role, content string) models.Message {
	return models.Message{ID: id, SessionID: "s", TurnID: "old-turn", Role: role, Content: content}
}

func TestCompactedMessages(t *testing.T) {
	const summary = compress.SummaryHeader + "\n\n## Goal\nship it\n"
	u1, a1 := msg(1, "user", "do the thing"), msg(2, "assistant", "on it")
	call := models.Message{ID: 3, Role: "assistant", ToolCalls: []models.ToolCall{{ID: "c1", Type: "function",
		Function: models.FunctionCall{Name: "read", Arguments: `{"path":"a"}`}}}}
	result := models.Message{ID: 4, Role: "tool", ToolCallID: "c1", Name: "read", Content: "contents"}
	oldSummary := msg(5, "user", compress.SummaryHeader+"\n\n## Goal\nolder")
	indented := msg(6, "user", " \n\t"+compress.SummaryHeader+" (indented)")
	assistantSummary := msg(7, "assistant", compress.SummaryHeader)
	mentions := msg(8, "user", "quoting "+compress.SummaryHeader+" mid-text")
	partial := msg(9, "user", "[CONTEXT COMPACTION")
	t1, t2 := msg(20, "user", "latest question"), msg(21, "assistant", "latest answer")
	middle := []models.Message{msg(10, "user", "middle"), msg(11, "assistant", "middle reply")}

	want := func(head []models.Message, tail ...models.Message) []models.Message {
		out := append([]models.Message(nil), head...)
		out = append(out, models.Message{TurnID: "turn-9", Role: "user", Content: summary})
		return append(out, tail...)
	}
	tests := []struct {
		name string
		plan compress.Plan
		want []models.Message
	}{
		{"head, summary, tail",
			compress.Plan{Head: []models.Message{u1, a1}, Middle: middle, Tail: []models.Message{t1, t2}},
			want([]models.Message{u1, a1}, t1, t2)},
		{"tool call and result kept in order",
			compress.Plan{Head: []models.Message{u1, call, result}, Middle: middle, Tail: []models.Message{t1}},
			want([]models.Message{u1, call, result}, t1)},
		{"older summary dropped from the head",
			compress.Plan{Head: []models.Message{u1, a1, oldSummary}, Middle: middle, Tail: []models.Message{t1, t2}},
			want([]models.Message{u1, a1}, t1, t2)},
		{"summary after leading white space dropped",
			compress.Plan{Head: []models.Message{u1, indented, a1}, Middle: middle, Tail: []models.Message{t2}},
			want([]models.Message{u1, a1}, t2)},
		{"summary of any role dropped",
			compress.Plan{Head: []models.Message{assistantSummary, u1}, Middle: middle, Tail: []models.Message{t1}},
			want([]models.Message{u1}, t1)},
		{"header not at the start kept",
			compress.Plan{Head: []models.Message{u1, mentions}, Middle: middle, Tail: []models.Message{t1}},
			want([]models.Message{u1, mentions}, t1)},
		{"partial header kept",
			compress.Plan{Head: []models.Message{partial}, Middle: middle, Tail: []models.Message{t1}},
			want([]models.Message{partial}, t1)},
		{"head only summaries",
			compress.Plan{Head: []models.Message{oldSummary, indented}, Middle: middle, Tail: []models.Message{t1}},
			want(nil, t1)},
		{"empty head",
			compress.Plan{Middle: middle, Tail: []models.Message{t1, t2}},
			want(nil, t1, t2)},
		{"empty tail",
			compress.Plan{Head: []models.Message{u1, a1}, Middle: middle},
			want([]models.Message{u1, a1})},
		{"empty plan", compress.Plan{}, want(nil)},
		{"summary in the tail is not filtered",
			compress.Plan{Head: []models.Message{u1}, Middle: middle, Tail: []models.Message{oldSummary, t1}},
			want([]models.Message{u1}, oldSummary, t1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			headBefore := append([]models.Message(nil), tt.plan.Head...)
			tailBefore := append([]models.Message(nil), tt.plan.Tail...)
			got := compactedMessages(tt.plan, "turn-9", summary)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("compactedMessages =\n  %+v\nwant\n  %+v", got, tt.want)
			}
			if !reflect.DeepEqual(tt.plan.Head, headBefore) || !reflect.DeepEqual(tt.plan.Tail, tailBefore) {
				t.Fatal("compactedMessages changed the plan")
			}
			// The result owns its memory: changing it leaves the plan alone.
			for i := range got {
				got[i].Content = "changed"
			}
			if !reflect.DeepEqual(tt.plan.Head, headBefore) || !reflect.DeepEqual(tt.plan.Tail, tailBefore) {
				t.Fatal("the result of compactedMessages aliases the plan")
			}
		})
	}
}

func TestContextTokens(t *testing.T) {
	x := func(n int) string { return strings.Repeat("x", n) }
	withUsage := func(content string, prompt, completion int64) models.Message {
		return models.Message{Role: "assistant", Content: content, PromptTokens: prompt, CompletionTokens: completion}
	}
	user := func(content string) models.Message { return models.Message{Role: "user", Content: content} }
	tool := func(content string) models.Message {
		return models.Message{Role: "tool", ToolCallID: "c", Content: content}
	}
	callNoUsage := models.Message{Role: "assistant", Content: x(8), ToolCalls: []models.ToolCall{{ID: "c",
		Function: models.FunctionCall{Name: "read", Arguments: "{}"}}}}

	tests := []struct {
		name    string
		system  string
		history []models.Message
		schema  int
		want    int
		// estimate: want must also equal the estimate of the system
		// message plus history (no assistant message reports usage).
		estimate bool
	}{
		{"system only", x(4), nil, 0, 1, true},
		{"system and schema", x(4), nil, 100, 26, true},
		{"empty", "", nil, 0, 0, true},
		{"no usage", x(4), []models.Message{user(x(8)), {Role: "assistant", Content: x(12)}}, 0, 6, true},
		{"no usage with schema", x(4), []models.Message{user(x(8))}, 20, 8, true},
		{"completion alone is no report", x(4), []models.Message{user(x(8)), withUsage(x(4), 0, 50)}, 0, 4, true},
		{"usage on a user message is no report", x(4), []models.Message{{Role: "user", Content: x(8), PromptTokens: 999}}, 0, 3, true},
		{"tool calls and reasoning are estimated", "", []models.Message{
			{Role: "assistant", Reasoning: "ééé", ToolCalls: []models.ToolCall{{Function: models.FunctionCall{Name: "read", Arguments: "{}"}}}}}, 0, 3, true},
		{"last message reports usage", x(4000), []models.Message{user(x(8)), withUsage(x(400), 1000, 200)}, 0, 1200, false},
		{"schema not added to a report", x(4000), []models.Message{user(x(8)), withUsage(x(400), 1000, 200)}, 4000, 1200, false},
		{"messages after the report estimated", x(4000), []models.Message{
			user(x(8)), withUsage(x(400), 1000, 200), tool(x(40)), user(x(8))}, 4000, 1200 + 12, false},
		{"last of two reports counts", "", []models.Message{
			user(x(8)), withUsage("", 1000, 200), tool(x(400)), withUsage("", 3000, 100), tool(x(4))}, 0, 3100 + 1, false},
		{"later reply without usage estimated after the report", "", []models.Message{
			user(x(8)), withUsage("", 1000, 200), tool(x(40)), callNoUsage}, 100, 1200 + (40+8+4+2+3)/4, false},
		{"prompt tokens without completion", "", []models.Message{withUsage("", 700, 0), user(x(1))}, 0, 701, false},
	}
	for _, tt := range tests {
		got := contextTokens(tt.system, tt.history, func() int { return tt.schema })
		if got != tt.want {
			t.Errorf("%s: contextTokens = %d, want %d", tt.name, got, tt.want)
		}
		if tt.estimate {
			all := append([]models.Message{{Role: "system", Content: tt.system}}, tt.history...)
			if est := compress.EstimateTokens(all, tt.schema); got != est {
				t.Errorf("%s: contextTokens = %d, want the estimate %d", tt.name, got, est)
			}
		}
	}
}

// TestContextTokensAfterReport: with a report, the result is the report
// plus compress.EstimateTokens of exactly the messages after it.
func TestContextTokensAfterReport(t *testing.T) {
	after := []models.Message{
		{Role: "tool", Content: strings.Repeat("r", 123), ToolCallID: "c"},
		{Role: "user", Content: "steer me"},
		{Role: "assistant", Content: "thinking", Reasoning: "hmm"},
	}
	history := append([]models.Message{
		{Role: "user", Content: strings.Repeat("q", 999)},
		{Role: "assistant", PromptTokens: 5000, CompletionTokens: 321},
	}, after...)
	want := 5000 + 321 + compress.EstimateTokens(after, 0)
	if got := contextTokens("system prompt", history, func() int { return 777 }); got != want {
		t.Fatalf("contextTokens = %d, want %d", got, want)
	}
}

func TestCompactedMessagesDropUsage(t *testing.T) {
	used := models.Message{Role: "assistant", Content: "x", PromptTokens: 90000, CompletionTokens: 50}
	plan := compress.Plan{Head: []models.Message{{Role: "user", Content: "task"}, used}, Tail: []models.Message{used}}
	for i, m := range compactedMessages(plan, "turn", "summary") {
		if m.PromptTokens != 0 || m.CompletionTokens != 0 {
			t.Errorf("message %d keeps the usage of the longer conversation: %+v", i, m)
		}
	}
	if plan.Head[1].PromptTokens != 90000 {
		t.Error("the plan was modified")
	}
}

// TestSummaryCallIsBoundedLikeAModelCall: the summary's model call ends
// after the idle timeout without progress (a hanging model is not waited
// for until the activity's wall-clock bound), and a provider's long
// Retry-After is reported capped, as CallModel does.
func TestSummaryCallIsBoundedLikeAModelCall(t *testing.T) {
	tests := []struct {
		name string
		step fakellm.Step
		want string
	}{
		{"a model that never answers", fakellm.Step{Hang: true}, string(turnapi.ClassTimeout)},
		{"a day's Retry-After", fakellm.Step{Status: 429, RetryAfter: "86400"}, "capped at 2s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			srv, err := fakellm.Start(fakellm.WithSteps(tt.step))
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			store, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := store.EnsureSession(ctx, "s", "m"); err != nil {
				t.Fatal(err)
			}
			var msgs []models.Message
			for i := range 8 {
				role := "user"
				if i%2 == 1 {
					role = "assistant"
				}
				msgs = append(msgs, models.Message{SessionID: "s", TurnID: "t", IdemKey: fmt.Sprintf("t/%d", i), Role: role, Content: fmt.Sprintf("message %d", i)})
			}
			if _, err := store.AppendMessages(ctx, msgs); err != nil {
				t.Fatal(err)
			}
			a := &Activities{Store: store, CompactKeepFirst: 1, CompactKeepLast: 2,
				Providers: func(string) ([]llm.Endpoint, error) {
					return []llm.Endpoint{{BaseURL: srv.URL(), APIKey: "k", Model: "m"}}, nil
				}}
			res, err := a.CompressContext(ctx, turnapi.CompressContextInput{TurnID: "t", SessionID: "s", Model: "m",
				IdleTimeout: 300 * time.Millisecond, MaxRetryAfter: 2 * time.Second})
			if err != nil {
				t.Fatalf("compaction failed: %v", err)
			}
			if !res.Compacted || !res.Fallback || !strings.Contains(res.SummaryError, tt.want) {
				t.Fatalf("compacted %v, fallback %v, summary error %q; want a static summary after %q",
					res.Compacted, res.Fallback, res.SummaryError, tt.want)
			}
		})
	}
}
