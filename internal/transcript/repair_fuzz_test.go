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
		switch b % 6 {
		case 0:
			switch b >> 6 {
			case 0:
				msgs = append(msgs, user(""))
			case 1:
				msgs = append(msgs, user(" \n"))
			default:
				msgs = append(msgs, user(fmt.Sprint(i)))
			}
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
			target := fmt.Sprintf("%s-%d-0", id, max(0, i-int(b>>5)))
			if i%3 == 0 {
				target = id // a result for a call carrying a repeated id
			}
			msgs = append(msgs, toolRes(target, fmt.Sprint("r", i)))
		case 5:
			// An id repeated within a message and across messages.
			msgs = append(msgs, asst(id, id))
		case 4:
			msgs = append(msgs, openai.ChatCompletionMessage{Role: "system", Content: "s"})
		}
	}
	return msgs
}

// FuzzRepair: whatever the sequence, every tool call in the repaired
// messages is answered exactly once, right after its assistant message; call
// ids are unique; no result is orphaned or sent twice; no real result that
// answers a call is lost; no user message is blank; and no two user or
// assistant messages are adjacent.
func FuzzRepair(f *testing.F) {
	f.Add([]byte{2, 3, 0})
	f.Add([]byte{2, 2, 1, 1, 0, 0, 3, 3})
	f.Add([]byte{0x82, 0x13, 0x23, 1, 0})
	f.Add([]byte{5, 3, 5, 0, 0x40, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := messagesFrom(data)
		out := Repair(in)
		ids := map[string]bool{}
		contents := map[string]bool{}
		for i := 0; i < len(out); i++ {
			m := out[i]
			if i > 0 && mergeable(out[i-1], m) {
				t.Fatalf("messages %d and %d (%s) should have been merged", i-1, i, m.Role)
			}
			if isBlankUser(m) {
				t.Fatalf("message %d is a blank user message", i)
			}
			if m.Role == openai.ChatMessageRoleTool {
				t.Fatalf("message %d: result %q not preceded by its call", i, m.ToolCallID)
			}
			if m.Role != openai.ChatMessageRoleAssistant {
				continue
			}
			for j, call := range m.ToolCalls {
				if call.ID == "" || ids[call.ID] {
					t.Fatalf("call id %q of message %d is empty or not unique", call.ID, i)
				}
				ids[call.ID] = true
				k := i + 1 + j
				if k >= len(out) || out[k].Role != openai.ChatMessageRoleTool || out[k].ToolCallID != call.ID {
					t.Fatalf("call %s of message %d is not answered at %d", call.ID, i, k)
				}
				if c := out[k].Content; c != UnansweredResult {
					if contents[c] {
						t.Fatalf("result %q sent twice", c)
					}
					contents[c] = true
				}
			}
			i += len(m.ToolCalls)
		}
		for _, c := range answering(in) {
			if !contents[c] {
				t.Fatalf("result %q answers a call but was dropped", c)
			}
		}
	})
}

// answering lists the contents of the results that answer a call: for each
// assistant message and each id it carries n times, the first n results
// with that id after it and before the next assistant message carrying the
// id again.
func answering(msgs []openai.ChatCompletionMessage) []string {
	var out []string
	for i, m := range msgs {
		count := map[string]int{}
		var order []string
		for _, tc := range m.ToolCalls {
			if count[tc.ID] == 0 {
				order = append(order, tc.ID)
			}
			count[tc.ID]++
		}
		for _, id := range order {
			n := count[id]
			for k := i + 1; k < len(msgs) && n > 0; k++ {
				if carries(msgs[k], id) {
					break
				}
				if msgs[k].Role == openai.ChatMessageRoleTool && msgs[k].ToolCallID == id {
					out = append(out, msgs[k].Content)
					n--
				}
			}
		}
	}
	return out
}

func carries(m openai.ChatCompletionMessage, id string) bool {
	for _, tc := range m.ToolCalls {
		if tc.ID == id {
			return true
		}
	}
	return false
}
