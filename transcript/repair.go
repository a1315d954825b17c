package transcript

import openai "github.com/sashabaranov/go-openai"

// UnansweredResult is the stub content given to a tool call that has no result.
const UnansweredResult = "Error: this tool call was not executed (no result was recorded)."

// Repair returns msgs fixed so a provider accepts them: a tool result with no
// matching earlier call is dropped, and every call left unanswered gets a stub
// result placed right after its call's other results. msgs is not modified.
func Repair(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	pending := []string{}     // call ids of the latest assistant message awaiting results
	open := map[string]bool{} // ids in pending
	flush := func() {
		for _, id := range pending {
			if open[id] {
				out = append(out, openai.ChatCompletionMessage{
					Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: UnansweredResult,
				})
			}
		}
		pending = pending[:0]
		clear(open)
	}
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleTool {
			if !open[m.ToolCallID] {
				continue // orphan or duplicate result
			}
			open[m.ToolCallID] = false
			out = append(out, m)
			continue
		}
		flush()
		out = append(out, m)
		if m.Role == openai.ChatMessageRoleAssistant {
			for _, tc := range m.ToolCalls {
				pending = append(pending, tc.ID)
				open[tc.ID] = true
			}
		}
	}
	flush()
	return out
}
