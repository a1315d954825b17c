package transcript

import (
	"fmt"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// messagesFrom decodes bytes into a message sequence: each byte picks a role
// and, for assistants and tool results, a call id from a small alphabet so
// that duplicates, orphans and gaps all occur.
func messagesFrom(data []byte) []openai.ChatCompletionMessage {
	var msgs []openai.ChatCompletionMessage
	for i, b := range data {
		id := fmt.Sprintf("c%d", b>>4&3)
		switch b % 5 {
		case 0:
			msgs = append(msgs, user(fmt.Sprint(i)))
		case 1:
			msgs = append(msgs, text(fmt.Sprint(i)))
		case 2:
			n := int(b>>6) + 1
			ids := make([]string, 0, n)
			for j := 0; j < n; j++ {
				ids = append(ids, fmt.Sprintf("%s-%d-%d", id, i, j))
			}
			msgs = append(msgs, asst(ids...))
		case 3:
			// A result for a call of an earlier assistant message, maybe.
			msgs = append(msgs, toolRes(fmt.Sprintf("%s-%d-0", id, max(0, i-int(b>>5))), "r"))
		case 4:
			msgs = append(msgs, openai.ChatCompletionMessage{Role: "system", Content: "s"})
		}
	}
	return msgs
}

// FuzzRepair: whatever the sequence, every tool call in the repaired
// messages is answered exactly once, right after its assistant message, no
// result is orphaned, and no two user or assistant messages are adjacent.
func FuzzRepair(f *testing.F) {
	f.Add([]byte{2, 3, 0})
	f.Add([]byte{2, 2, 1, 1, 0, 0, 3, 3})
	f.Add([]byte{0x82, 0x13, 0x23, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		out := Repair(messagesFrom(data))
		for i := 0; i < len(out); i++ {
			m := out[i]
			if i > 0 && mergeable(out[i-1], m) {
				t.Fatalf("messages %d and %d (%s) should have been merged", i-1, i, m.Role)
			}
			if m.Role == openai.ChatMessageRoleTool {
				t.Fatalf("message %d: result %q not preceded by its call", i, m.ToolCallID)
			}
			if m.Role != openai.ChatMessageRoleAssistant {
				continue
			}
			for j, call := range m.ToolCalls {
				k := i + 1 + j
				if k >= len(out) || out[k].Role != openai.ChatMessageRoleTool || out[k].ToolCallID != call.ID {
					t.Fatalf("call %s of message %d is not answered at %d", call.ID, i, k)
				}
			}
			i += len(m.ToolCalls)
		}
	})
}
