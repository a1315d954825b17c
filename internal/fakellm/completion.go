package fakellm

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// completionBody builds the chat.completion object of a JSON answer.
func completionBody(p plan) wireCompletion {
	msg := wireMessage{Role: "assistant", ReasoningContent: p.step.Reasoning}
	if p.step.Text != "" || len(p.calls) == 0 {
		text := p.step.Text
		msg.Content = &text
	}
	for _, c := range p.calls {
		args := c.Arguments
		msg.ToolCalls = append(msg.ToolCalls, wireToolCall{
			ID:       c.ID,
			Type:     "function",
			Function: wireFunction{Name: c.Name, Arguments: &args},
		})
	}
	usage := p.usage
	return wireCompletion{
		ID:      p.id,
		Object:  "chat.completion",
		Created: p.created,
		Model:   p.model,
		Choices: []wireChoice{{Index: 0, Message: msg, FinishReason: p.finish}},
		Usage:   &usage,
	}
}

// writeCompletion writes a JSON answer. It reports whether the answer was
// deliberately broken (Step.BreakAfterChunks).
func writeCompletion(w http.ResponseWriter, p plan, body any) (cancelled, broken bool) {
	b, err := json.Marshal(body)
	if err != nil {
		http.Error(w, "fakellm: encoding answer: "+err.Error(), http.StatusInternalServerError)
		return false, false
	}
	b = append(b, '\n')
	if p.step.EndAfterChunks > 0 {
		b = b[:len(b)/2]
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(p.status)
	if p.step.BreakAfterChunks > 0 {
		_, _ = w.Write(b[:len(b)/2])
		_ = http.NewResponseController(w).Flush()
		breakConnection(w)
		return false, true
	}
	if _, err := w.Write(b); err != nil {
		return true, false
	}
	return false, p.step.EndAfterChunks > 0
}

// writeRaw writes a step's Body as the whole answer.
func writeRaw(w http.ResponseWriter, p plan) (cancelled, broken bool) {
	ct := p.step.ContentType
	if ct == "" {
		ct = "text/html; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(p.step.Body)))
	w.WriteHeader(p.status)
	if _, err := w.Write([]byte(p.step.Body)); err != nil {
		return true, false
	}
	return false, false
}
