package transcript

import openai "github.com/sashabaranov/go-openai"

// UnansweredResult is the stub content given to a tool call that has no result.
const UnansweredResult = "Error: this tool call was not executed (no result was recorded)."

// Repair returns msgs fixed so a provider accepts them: a tool result with no
// matching earlier call is dropped, every call left unanswered gets a stub
// result placed right after its call's other results, and consecutive user
// messages, or consecutive assistant messages, are merged into one (strict
// role alternation). msgs is not modified.
func Repair(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	return mergeConsecutive(pairToolResults(msgs))
}

// mergeConsecutive merges runs of user messages, and runs of assistant
// messages, keeping every tool call (they can only be on the run's last
// message: pairToolResults put results after any earlier calls).
func mergeConsecutive(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		n := len(out)
		if n > 0 && mergeable(out[n-1], m) {
			prev := &out[n-1]
			prev.Content = joinContent(prev.Content, m.Content)
			prev.ReasoningContent = joinContent(prev.ReasoningContent, m.ReasoningContent)
			prev.ToolCalls = append(prev.ToolCalls, m.ToolCalls...)
			continue
		}
		out = append(out, m)
	}
	return out
}

func mergeable(prev, next openai.ChatCompletionMessage) bool {
	if prev.Role != next.Role || len(prev.MultiContent) > 0 || len(next.MultiContent) > 0 {
		return false
	}
	switch prev.Role {
	case openai.ChatMessageRoleUser:
		return true
	case openai.ChatMessageRoleAssistant:
		return len(prev.ToolCalls) == 0
	}
	return false
}

func joinContent(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// pairToolResults drops orphan results and answers unanswered calls.
func pairToolResults(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
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
