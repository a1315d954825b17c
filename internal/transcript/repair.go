package transcript

import (
	"cmp"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// UnansweredResult is the stub content given to a tool call that has no result.
const UnansweredResult = "Error: this tool call was not executed (no result was recorded)."

// EmptyUserMessage stands in for a user message with no text: providers
// refuse an empty one.
const EmptyUserMessage = "(empty message)"

// Repair returns msgs fixed so a provider accepts them, losing no result:
//   - adjacent assistant messages that both carry tool calls (one batch
//     stored in parts) become one message holding all the calls;
//   - every tool call is followed by exactly one result, in call order: its
//     own, found anywhere after the call and before the next assistant
//     message that carries the same id, or else a stub (UnansweredResult);
//     results that answer no call, or a call already answered, are dropped;
//   - every call id is unique in the request: a repeated id (in one message
//     or a later one) is renamed, together with the result paired with it;
//   - consecutive user messages, or consecutive assistant messages, are
//     merged into one (strict role alternation); user messages of which
//     one has parts (pictures) merge into one message of parts, the
//     text of each as a text part, in order;
//   - a user message with no text but white space says EmptyUserMessage
//     unless merged into another.
//
// msgs is not modified.
func Repair(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	out := mergeConsecutive(pairToolResults(mergeSplitBatches(blankUsers(msgs))))
	for i := range out {
		if isBlankUser(out[i]) {
			out[i].Content = EmptyUserMessage
		}
	}
	return out
}

// blankUsers returns msgs with the content of white-space-only user
// messages emptied, so merging drops it.
func blankUsers(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, len(msgs))
	for i, m := range msgs {
		if m.Role == openai.ChatMessageRoleUser && len(m.MultiContent) == 0 && strings.TrimSpace(m.Content) == "" {
			m.Content = ""
		}
		out[i] = m
	}
	return out
}

func isBlankUser(m openai.ChatCompletionMessage) bool {
	return m.Role == openai.ChatMessageRoleUser && len(m.MultiContent) == 0 && strings.TrimSpace(m.Content) == ""
}

// mergeSplitBatches merges runs of adjacent assistant messages that all
// carry tool calls: one batch of parallel calls stored as several
// messages, whose results follow the last of them.
func mergeSplitBatches(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		n := len(out)
		if n > 0 && hasCalls(out[n-1]) && hasCalls(m) && len(out[n-1].MultiContent) == 0 && len(m.MultiContent) == 0 {
			prev := &out[n-1]
			prev.Content = joinContent(prev.Content, m.Content)
			prev.ReasoningContent = joinContent(prev.ReasoningContent, m.ReasoningContent)
			prev.ToolCalls = append(append([]openai.ToolCall(nil), prev.ToolCalls...), m.ToolCalls...)
			continue
		}
		out = append(out, m)
	}
	return out
}

func hasCalls(m openai.ChatCompletionMessage) bool {
	return m.Role == openai.ChatMessageRoleAssistant && len(m.ToolCalls) > 0
}

// mergeConsecutive merges runs of user messages, and runs of assistant
// messages, keeping every tool call (they can only be on the run's last
// message: pairToolResults put results after any earlier calls).
func mergeConsecutive(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		n := len(out)
		if n > 0 && mergeableParts(out[n-1], m) {
			prev := &out[n-1]
			prev.MultiContent = append(userParts(*prev), userParts(m)...)
			prev.Content = ""
			continue
		}
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

// mergeableParts reports whether prev and next are user messages of
// which at least one has parts. Pure.
func mergeableParts(prev, next openai.ChatCompletionMessage) bool {
	return prev.Role == openai.ChatMessageRoleUser && next.Role == openai.ChatMessageRoleUser &&
		(len(prev.MultiContent) > 0 || len(next.MultiContent) > 0)
}

// userParts is a user message's content as parts: its parts, or its
// text as one text part (none when it has no text). Pure.
func userParts(m openai.ChatCompletionMessage) []openai.ChatMessagePart {
	if len(m.MultiContent) > 0 {
		return append([]openai.ChatMessagePart(nil), m.MultiContent...)
	}
	if m.Content == "" {
		return nil
	}
	return []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: m.Content}}
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

// positions lists, per id, the indexes of messages in increasing order,
// with a cursor for consuming them in that order.
type positions struct {
	at  map[string][]int
	cur map[string]int
}

func newPositions() positions {
	return positions{at: map[string][]int{}, cur: map[string]int{}}
}

func (p positions) add(id string, i int) {
	if l := p.at[id]; len(l) == 0 || l[len(l)-1] != i {
		p.at[id] = append(l, i)
	}
}

// next returns the first position of id after i not yet taken, if any.
func (p positions) next(id string, after int) (int, bool) {
	l, c := p.at[id], p.cur[id]
	for c < len(l) && l[c] <= after {
		c++
	}
	p.cur[id] = c
	if c == len(l) {
		return 0, false
	}
	return l[c], true
}

// take marks the position next returned as taken.
func (p positions) take(id string) { p.cur[id]++ }

// pairToolResults puts after each assistant message one result per call,
// in call order, relocating each call's own result and stubbing missing
// ones, gives every call a unique id, and drops every other result.
func pairToolResults(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	results, calls := newPositions(), newPositions()
	for i, m := range msgs {
		switch {
		case m.Role == openai.ChatMessageRoleTool:
			results.add(m.ToolCallID, i)
		case hasCalls(m):
			for _, tc := range m.ToolCalls {
				calls.add(tc.ID, i)
			}
		}
	}
	ids := idSet{used: map[string]bool{}, sent: map[string]bool{}}
	for id := range calls.at {
		ids.sent[id] = true
	}
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for i, m := range msgs {
		if m.Role == openai.ChatMessageRoleTool {
			continue // placed after its call, or dropped
		}
		if !hasCalls(m) {
			out = append(out, m)
			continue
		}
		m.ToolCalls = append([]openai.ToolCall(nil), m.ToolCalls...)
		answers := make([]openai.ChatCompletionMessage, 0, len(m.ToolCalls))
		for j, tc := range m.ToolCalls {
			limit, ok := calls.next(tc.ID, i)
			if !ok {
				limit = len(msgs)
			}
			res := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: tc.ID, Content: UnansweredResult}
			if k, ok := results.next(tc.ID, i); ok && k < limit {
				res = msgs[k]
				results.take(tc.ID)
			}
			id := ids.unique(tc.ID)
			m.ToolCalls[j].ID, res.ToolCallID = id, id
			answers = append(answers, res)
		}
		out = append(out, m)
		out = append(out, answers...)
	}
	return out
}

// idSet hands out call ids unique in a request.
type idSet struct {
	used map[string]bool // ids given out
	sent map[string]bool // ids the messages carry
}

// unique returns id the first time it is asked for; an id asked for again,
// or empty, is replaced by one derived from it that no message carries.
func (s idSet) unique(id string) string {
	if id != "" && !s.used[id] {
		s.used[id] = true
		return id
	}
	base := cmp.Or(id, "call")
	for n := 2; ; n++ {
		c := base + "_" + strconv.Itoa(n)
		if !s.used[c] && !s.sent[c] {
			s.used[c] = true
			return c
		}
	}
}
