package transcript

import (
	"cmp"
	"strconv"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// SteerHeader opens the out-of-band block that carries a steer inside the
// tool result it follows.
const SteerHeader = "[OUT-OF-BAND MESSAGE FROM THE USER, sent while you were working. It may change the task:]"

// ToOpenAI converts stored messages to chat completion messages, in order. A
// steer that follows a tool result is folded into that result inside a
// marked block; elsewhere it is a plain user message.
func ToOpenAI(msgs []models.Message) []openai.ChatCompletionMessage {
	return ToOpenAIWith(msgs, func(_ int, m models.Message) openai.ChatCompletionMessage { return MessageToOpenAI(m) })
}

// ToOpenAIWith is ToOpenAI converting each message it does not fold into
// a tool result with convert, which is given the message's index in msgs
// (a caller shows a user message's pictures so).
func ToOpenAIWith(msgs []models.Message, convert func(i int, m models.Message) openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for i, m := range msgs {
		n := len(out)
		if m.Steer && n > 0 && out[n-1].Role == openai.ChatMessageRoleTool && len(out[n-1].MultiContent) == 0 {
			out[n-1].Content += "\n\n" + SteerHeader + "\n" + m.Content
			continue
		}
		out = append(out, convert(i, m))
	}
	return out
}

// ToMessages converts stored messages to the messages a turn's result
// shows, in order, as [ToOpenAI] sends them to the model.
func ToMessages(msgs []models.Message) []turnapi.Message {
	sent := ToOpenAI(msgs)
	out := make([]turnapi.Message, 0, len(sent))
	for _, m := range sent {
		msg := turnapi.Message{Role: m.Role, Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, turnapi.ToolCall{
				ID: tc.ID, Type: string(tc.Type),
				Function: turnapi.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments},
			})
		}
		out = append(out, msg)
	}
	return out
}

// MessageToOpenAI converts one stored message.
func MessageToOpenAI(m models.Message) openai.ChatCompletionMessage {
	msg := openai.ChatCompletionMessage{
		Role:       m.Role,
		Content:    m.Content,
		ToolCallID: m.ToolCallID,
	}
	if m.Role == openai.ChatMessageRoleTool {
		msg.Name = m.Name
	}
	for _, tc := range m.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{
			ID:   tc.ID,
			Type: openai.ToolType(cmp.Or(tc.Type, string(openai.ToolTypeFunction))),
			Function: openai.FunctionCall{
				Name:      tc.Function.Name,
				Arguments: tc.Function.Arguments,
			},
		})
	}
	return msg
}

// MaxToolCallIDLen bounds the call ids kept as sent; longer ones (they end
// up in storage keys) are replaced like missing ones.
const MaxToolCallIDLen = 128

// ToolCallsFromOpenAI converts a reply's tool calls for storage, giving every
// call an id (some servers omit them) that is unique within the reply.
func ToolCallsFromOpenAI(calls []openai.ToolCall, idPrefix string) []models.ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]models.ToolCall, 0, len(calls))
	seen := map[string]bool{}
	for i, tc := range calls {
		id := tc.ID
		for n := i + 1; id == "" || seen[id] || len(id) > MaxToolCallIDLen; n += len(calls) {
			id = idPrefix + strconv.Itoa(n)
		}
		seen[id] = true
		out = append(out, models.ToolCall{
			ID:   id,
			Type: cmp.Or(string(tc.Type), string(openai.ToolTypeFunction)),
			Function: models.FunctionCall{
				Name:      tc.Function.Name,
				Arguments: tc.Function.Arguments,
			},
		})
	}
	return out
}
