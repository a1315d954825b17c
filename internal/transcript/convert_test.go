package transcript

import (
	"slices"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/models"
)

func TestToOpenAIFoldsSteers(t *testing.T) {
	t.Parallel()
	msgs := []models.Message{
		{Role: "user", Content: "do it"},
		{Role: "assistant", ToolCalls: []models.ToolCall{{ID: "a", Type: "function", Function: models.FunctionCall{Name: "terminal"}}}},
		{Role: "tool", ToolCallID: "a", Name: "terminal", Content: "ran"},
		{Role: "user", Steer: true, Content: "use python instead"},
		{Role: "assistant", Content: "ok"},
		{Role: "user", Steer: true, Content: "and be brief"},
	}
	out := ToOpenAI(msgs)
	if len(out) != 5 {
		t.Fatalf("got %d messages, want 5", len(out))
	}
	want := "ran\n\n" + SteerHeader + "\nuse python instead"
	if out[2].Content != want || out[2].Role != "tool" {
		t.Fatalf("tool result = %q", out[2].Content)
	}
	if out[4].Role != "user" || out[4].Content != "and be brief" {
		t.Fatalf("steer between calls = %+v", out[4])
	}
	// ToOpenAIWith converts what is not folded, knowing each message's
	// index in msgs.
	var seen []int
	with := ToOpenAIWith(msgs, func(i int, m models.Message) openai.ChatCompletionMessage {
		seen = append(seen, i)
		return MessageToOpenAI(m)
	})
	if len(with) != 5 || with[2].Content != want || !slices.Equal(seen, []int{0, 1, 2, 4, 5}) {
		t.Fatalf("ToOpenAIWith = %+v, converted %v", with, seen)
	}
}

func TestToolCallsFromOpenAIIDs(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxToolCallIDLen+1)
	calls := []openai.ToolCall{{ID: "a"}, {ID: ""}, {ID: "a"}, {ID: long}, {ID: "b"}}
	got := ToolCallsFromOpenAI(calls, "call_7_")
	want := []string{"a", "call_7_2", "call_7_3", "call_7_4", "b"}
	for i, c := range got {
		if c.ID != want[i] || c.Type != "function" {
			t.Fatalf("call %d = %+v, want id %s", i, c, want[i])
		}
	}
}

// Every stored call id is unique in its reply, even when the ids the model
// sent collide with the ones given to calls without one.
func TestToolCallsFromOpenAIIDsUnique(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ids  []string
		want []string
	}{
		{"given id takes a generated one's place", []string{"call_7_2", ""}, []string{"call_7_2", "call_7_4"}},
		{"generated id taken later", []string{"", "call_7_1"}, []string{"call_7_1", "call_7_2"}},
		{"all the same", []string{"x", "x", "x"}, []string{"x", "call_7_2", "call_7_3"}},
		{"all empty", []string{"", "", ""}, []string{"call_7_1", "call_7_2", "call_7_3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			calls := make([]openai.ToolCall, len(tt.ids))
			for i, id := range tt.ids {
				calls[i].ID = id
			}
			got := ToolCallsFromOpenAI(calls, "call_7_")
			seen := map[string]bool{}
			for i, c := range got {
				if c.ID != tt.want[i] || seen[c.ID] {
					t.Fatalf("ids = %+v, want %v", got, tt.want)
				}
				seen[c.ID] = true
			}
		})
	}
}
