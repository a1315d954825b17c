package fakellm

// This file is Ollama's native chat API: how its requests are authorized
// and its errors written, and its answers, one JSON object or a stream of
// NDJSON lines ending with a "done": true line.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// ollamaFormat is Ollama's native chat API at POST /api/chat.
type ollamaFormat struct{}

// wire names the format in Request.Wire.
func (ollamaFormat) wire() Wire { return WireOllama }

// ndjson marks the format's streams as NDJSON.
func (ollamaFormat) ndjson() {}

// authorized checks a bearer token: Ollama wants none, the proxies in
// front of it do.
func (ollamaFormat) authorized(r *http.Request, key string) bool {
	return key == "" || r.Header.Get("Authorization") == "Bearer "+key
}

// decode reads and checks a request (decodeOllama).
func (ollamaFormat) decode(raw []byte) (decoded, error) { return decodeOllama(raw) }

// writeError writes Ollama's error body {"error": message}, with the
// step's Retry-After.
func (ollamaFormat) writeError(w http.ResponseWriter, e apiError) {
	if e.retryAfter != "" {
		w.Header().Set("Retry-After", e.retryAfter)
	}
	writeOllamaError(w, e.status, e.message)
}

// ollamaLine is one line of an answer (or the whole answer).
type ollamaLine struct {
	Model     string            `json:"model"`
	CreatedAt string            `json:"created_at"`
	Message   ollamaLineMessage `json:"message"`
	Done      bool              `json:"done"`
	// The rest is the done line's.
	DoneReason         string `json:"done_reason,omitempty"`
	TotalDuration      int64  `json:"total_duration,omitempty"`
	LoadDuration       int64  `json:"load_duration,omitempty"`
	PromptEvalCount    int    `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration int64  `json:"prompt_eval_duration,omitempty"`
	EvalCount          int    `json:"eval_count,omitempty"`
	EvalDuration       int64  `json:"eval_duration,omitempty"`
}

// ollamaLineMessage is the message of a line: the whole message in a
// JSON answer, a piece of it in a stream line.
type ollamaLineMessage struct {
	Role      string           `json:"role"`
	Content   string           `json:"content"`
	Thinking  string           `json:"thinking,omitempty"`
	ToolCalls []ollamaToolCall `json:"tool_calls,omitempty"`
}

// ollamaLineOf is a line of p's answer carrying msg.
func ollamaLineOf(p plan, msg ollamaLineMessage) ollamaLine {
	msg.Role = "assistant"
	return ollamaLine{Model: p.model, CreatedAt: p.received.UTC().Format(time.RFC3339Nano), Message: msg}
}

// ollamaDone is the done line of p's answer: its done reason ("length"
// for the finish reason length, else "stop", as Ollama says it with tool
// calls too) and token counts.
func ollamaDone(p plan, msg ollamaLineMessage) ollamaLine {
	l := ollamaLineOf(p, msg)
	l.Done, l.DoneReason = true, "stop"
	if p.finish == "length" {
		l.DoneReason = "length"
	}
	l.PromptEvalCount, l.EvalCount = p.usage.PromptTokens, p.usage.CompletionTokens
	l.TotalDuration, l.LoadDuration = 1_500_000_000, 2_000_000
	l.PromptEvalDuration, l.EvalDuration = int64(p.usage.PromptTokens)*100_000, int64(p.usage.CompletionTokens)*20_000_000
	return l
}

// ollamaCalls is p's tool calls as Ollama sends them, complete: arguments
// that are not a JSON object are sent as {} (Ollama parses the model's
// call before it sends it); an id only when the script names one, as
// newer Ollama versions send.
func ollamaCalls(p plan) []ollamaToolCall {
	var out []ollamaToolCall
	for i, c := range p.calls {
		args := json.RawMessage("{}")
		if raw := json.RawMessage(c.Arguments); isObjectOrNull(raw) {
			args = json.RawMessage(argumentText(raw))
		}
		call := ollamaToolCall{Function: ollamaFunction{Index: i, Name: c.Name, Arguments: args}}
		if i < len(p.step.ToolCalls) && p.step.ToolCalls[i].ID != "" {
			call.ID = c.ID
		}
		out = append(out, call)
	}
	return out
}

// body is the JSON answer: the whole message on the done line.
func (ollamaFormat) body(p plan) (any, error) {
	return ollamaDone(p, ollamaLineMessage{Content: p.step.Text, Thinking: p.step.Reasoning, ToolCalls: ollamaCalls(p)}), nil
}

// events is the streamed answer: the reasoning, then the text, in
// pieces; the tool calls complete on one line; then the done line.
func (ollamaFormat) events(p plan) ([]sseEvent, error) {
	var events []sseEvent
	add := func(kind chunkKind, l ollamaLine) error {
		b, err := json.Marshal(l)
		if err != nil {
			return fmt.Errorf("encoding a line: %w", err)
		}
		events = append(events, sseEvent{kind: kind, data: b})
		return nil
	}
	for _, piece := range splitText(p.step.Reasoning, p.step.ChunkSize) {
		if err := add(chunkContent, ollamaLineOf(p, ollamaLineMessage{Thinking: piece})); err != nil {
			return nil, err
		}
	}
	for _, piece := range splitText(p.step.Text, p.step.ChunkSize) {
		if err := add(chunkContent, ollamaLineOf(p, ollamaLineMessage{Content: piece})); err != nil {
			return nil, err
		}
	}
	if calls := ollamaCalls(p); len(calls) > 0 {
		if err := add(chunkContent, ollamaLineOf(p, ollamaLineMessage{ToolCalls: calls})); err != nil {
			return nil, err
		}
	}
	if err := add(chunkTail, ollamaDone(p, ollamaLineMessage{})); err != nil {
		return nil, err
	}
	return events, nil
}
