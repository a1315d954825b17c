package transcript

import (
	"encoding/json"
	"testing"

	"github.com/talaria-agent/talaria/models"
)

// TestToMessagesJSONAsOpenAI: a turn's result shows its messages in
// Talaria's own type with the JSON clients read before, the chat completion
// message's: the same bytes for every kind of message.
func TestToMessagesJSONAsOpenAI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msgs []models.Message
	}{
		{"empty", nil},
		{"user", []models.Message{{Role: "user", Content: "hi <b>&</b>"}}},
		{"calls and results", []models.Message{
			{Role: "assistant", Content: "reading", ToolCalls: []models.ToolCall{
				{ID: "a", Type: "function", Function: models.FunctionCall{Name: "read_file", Arguments: `{"path":"x"}`}},
				{ID: "b", Function: models.FunctionCall{Name: "terminal"}}, // no type: sent as function
			}},
			{Role: "tool", ToolCallID: "a", Name: "read_file", Content: "text"},
			{Role: "tool", ToolCallID: "b", Name: "terminal"},
		}},
		{"folded steer", []models.Message{
			{Role: "tool", ToolCallID: "a", Name: "terminal", Content: "ran"},
			{Role: "user", Steer: true, Content: "use python"},
			{Role: "user", Steer: true, Content: "and be brief"},
		}},
		{"name only on tool results", []models.Message{{Role: "user", Name: "someone", Content: "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(ToMessages(tt.msgs))
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(ToOpenAI(tt.msgs))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("ToMessages JSON\n got %s\nwant %s", got, want)
			}
		})
	}
}
