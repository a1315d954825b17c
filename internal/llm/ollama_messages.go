package llm

// This file converts a Request's chat-completions messages into Ollama's
// native messages: tool calls carry their arguments as a JSON object,
// tool results name the tool they answer (tool_name), and the calls and
// results of a conversation continued from another wire format are
// repaired as for the other providers: a result whose call is not there
// is dropped, a call without a result is answered with missingOutput.

import (
	"encoding/json"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// ollamaMessage is one message of a request, or the message of an
// answer's line.
type ollamaMessage struct {
	Role      string           `json:"role"`
	Content   string           `json:"content"`
	Thinking  string           `json:"thinking,omitempty"`
	Images    []string         `json:"images,omitempty"`
	ToolCalls []ollamaToolCall `json:"tool_calls,omitempty"`
	// ToolName is the name of the tool a tool message answers.
	ToolName string `json:"tool_name,omitempty"`
	// ToolCallID is the id of the call a tool message answers: Ollama
	// versions that give calls ids read it, others ignore it.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ollamaToolCall is one tool call. Ollama gives calls no id (newer
// versions may send one); its arguments are a JSON object.
type ollamaToolCall struct {
	ID       string             `json:"id,omitempty"`
	Function ollamaFunctionCall `json:"function"`
}

// ollamaFunctionCall is a call's function and arguments.
type ollamaFunctionCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ollamaPending is a call of the last assistant message, waiting for its
// result.
type ollamaPending struct {
	id, name string
	result   *ollamaMessage
}

// ollamaBuilder accumulates the messages of one request.
type ollamaBuilder struct {
	replay  map[string]Replay
	out     []ollamaMessage
	called  map[string]bool // ids of the calls so far
	pending []ollamaPending // calls of the last assistant message
}

// ollamaMessages converts the messages of in. Results follow their
// assistant message in the order of its calls, whatever order they came
// in. Pure.
func ollamaMessages(in Request) []ollamaMessage {
	b := &ollamaBuilder{replay: in.Replay, called: map[string]bool{}}
	for _, m := range in.Messages {
		switch m.Role {
		case openai.ChatMessageRoleSystem, openai.ChatMessageRoleDeveloper:
			b.flush()
			b.out = append(b.out, ollamaMessage{Role: "system", Content: messageText(m)})
		case openai.ChatMessageRoleAssistant:
			b.flush()
			b.assistant(m)
		case openai.ChatMessageRoleTool, openai.ChatMessageRoleFunction:
			b.result(m)
		default:
			b.flush()
			b.out = append(b.out, ollamaMessage{Role: "user", Content: messageText(m), Images: ollamaImages(m)})
		}
	}
	b.flush()
	return b.out
}

// assistant adds an assistant message: its thinking (the reply's own, as
// its replay state keeps it), text and calls. A call without an id, or
// with an id already used, cannot be answered and is left out; a message
// left with nothing is dropped.
func (b *ollamaBuilder) assistant(m openai.ChatCompletionMessage) {
	msg := ollamaMessage{Role: "assistant", Content: messageText(m), Thinking: ollamaThinking(m, b.replay)}
	for _, c := range m.ToolCalls {
		if c.ID == "" || b.called[c.ID] {
			continue
		}
		b.called[c.ID] = true
		b.pending = append(b.pending, ollamaPending{id: c.ID, name: c.Function.Name})
		msg.ToolCalls = append(msg.ToolCalls, ollamaToolCall{ID: c.ID,
			Function: ollamaFunctionCall{Name: c.Function.Name, Arguments: toolInput(c.Function.Arguments)}})
	}
	if msg.Content == "" && msg.Thinking == "" && len(msg.ToolCalls) == 0 {
		return
	}
	b.out = append(b.out, msg)
}

// result keeps a tool message for the call of the last assistant message
// it answers; one that answers no such call (or a call already answered)
// is dropped.
func (b *ollamaBuilder) result(m openai.ChatCompletionMessage) {
	for i := range b.pending {
		p := &b.pending[i]
		if p.id != m.ToolCallID || p.result != nil {
			continue
		}
		p.result = &ollamaMessage{Role: "tool", Content: messageText(m), ToolName: p.name, ToolCallID: p.id}
		return
	}
}

// flush writes the results of the last assistant message's calls, in the
// order of the calls, answering a call without one with missingOutput.
func (b *ollamaBuilder) flush() {
	for _, p := range b.pending {
		if p.result != nil {
			b.out = append(b.out, *p.result)
			continue
		}
		b.out = append(b.out, ollamaMessage{Role: "tool", Content: missingOutput, ToolName: p.name, ToolCallID: p.id})
	}
	b.pending = nil
}

// ollamaThinking is the thinking to send back with an assistant message:
// what its replay state, written by this wire format, keeps, else the
// message's own reasoning. Pure.
func ollamaThinking(m openai.ChatCompletionMessage, replay map[string]Replay) string {
	if r, ok := replay[ReplayKey(m)]; ok && r.Wire == WireOllama && len(m.ToolCalls) > 0 {
		var thinking string
		if json.Unmarshal(r.Data, &thinking) == nil && thinking != "" {
			return thinking
		}
	}
	return m.ReasoningContent
}

// ollamaReplay is the replay state of a reply's thinking: sent back with
// the calls it led to (the model keeps its reasoning through a tool
// loop); nil without calls or thinking. Pure.
func ollamaReplay(thinking string, calls int) *Replay {
	if thinking == "" || calls == 0 {
		return nil
	}
	data, err := json.Marshal(thinking)
	if err != nil {
		return nil // a string always encodes
	}
	return &Replay{Wire: WireOllama, Data: data}
}

// ollamaImages is the images of a multi-part user message, as Ollama
// takes them: the base64 data of data URLs (it fetches no URL). Pure.
func ollamaImages(m openai.ChatCompletionMessage) []string {
	var out []string
	for _, p := range m.MultiContent {
		if p.Type != openai.ChatMessagePartTypeImageURL || p.ImageURL == nil {
			continue
		}
		rest, ok := strings.CutPrefix(p.ImageURL.URL, "data:")
		if !ok {
			continue
		}
		if meta, data, ok := strings.Cut(rest, ","); ok && strings.HasSuffix(meta, ";base64") && data != "" {
			out = append(out, data)
		}
	}
	return out
}
