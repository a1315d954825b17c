package fakellm

// This file writes the answers of the Anthropic format: a JSON message,
// or the named events of a streamed one.

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The JSON shapes of Anthropic answers.
type (
	antWireMessage struct {
		ID           string         `json:"id"`
		Type         string         `json:"type"`
		Role         string         `json:"role"`
		Model        string         `json:"model"`
		Content      []antWireBlock `json:"content"`
		StopReason   *string        `json:"stop_reason"`
		StopSequence *string        `json:"stop_sequence"`
		Usage        antWireUsage   `json:"usage"`
	}
	antWireBlock struct {
		Type      string          `json:"type"`
		Text      *string         `json:"text,omitempty"`
		Thinking  *string         `json:"thinking,omitempty"`
		Signature *string         `json:"signature,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
		// args is a tool_use's argument text as the script gives it: a
		// stream sends it as it is, pieces of partial_json (a model cut
		// off, or one that writes bad JSON, streams what it wrote); a JSON
		// answer can only carry an object (Input).
		args string
	}
	antWireUsage struct {
		InputTokens              int               `json:"input_tokens"`
		CacheCreationInputTokens int               `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int               `json:"cache_read_input_tokens"`
		OutputTokens             int               `json:"output_tokens"`
		OutputTokensDetails      *antOutputDetails `json:"output_tokens_details,omitempty"`
	}
	antOutputDetails struct {
		ThinkingTokens int `json:"thinking_tokens"`
	}
	antWireDelta struct {
		Type        string  `json:"type,omitempty"`
		Text        *string `json:"text,omitempty"`
		Thinking    *string `json:"thinking,omitempty"`
		Signature   *string `json:"signature,omitempty"`
		PartialJSON *string `json:"partial_json,omitempty"`
	}
	antWireEvent struct {
		Type         string          `json:"type"`
		Message      *antWireMessage `json:"message,omitempty"`
		Index        *int            `json:"index,omitempty"`
		ContentBlock *antWireBlock   `json:"content_block,omitempty"`
		Delta        any             `json:"delta,omitempty"`
		Usage        *antWireUsage   `json:"usage,omitempty"`
	}
	antStopDelta struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	}
)

// anthropicStop is a plan's finish reason as a stop_reason: the
// chat-completions words mapped, any other value as it is (a script can
// say "pause_turn"). Pure.
func anthropicStop(finish string) string {
	switch finish {
	case "stop":
		return "end_turn"
	case "length":
		return "max_tokens"
	case "tool_calls":
		return "tool_use"
	case "content_filter":
		return "refusal"
	}
	return finish
}

// anthropicID is a plan's id as a message id. Pure.
func anthropicID(id string) string {
	return "msg_" + strings.ReplaceAll(strings.TrimPrefix(id, "chatcmpl-"), "-", "_")
}

// toolInputJSON is a call's arguments as a tool_use input: the JSON they
// are when valid, else {}. Pure.
func toolInputJSON(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	return json.RawMessage("{}")
}

// messageBody is the JSON message answering a plan.
func (f *anthropicFormat) messageBody(p plan) antWireMessage {
	var content []antWireBlock
	if p.step.Reasoning != "" {
		thinking, sig := p.step.Reasoning, f.signer.sign(p.step.Reasoning)
		content = append(content, antWireBlock{Type: "thinking", Thinking: &thinking, Signature: &sig})
	}
	if p.step.Text != "" || len(p.calls) == 0 {
		text := p.step.Text
		content = append(content, antWireBlock{Type: "text", Text: &text})
	}
	for _, c := range p.calls {
		content = append(content, antWireBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: toolInputJSON(c.Arguments), args: c.Arguments})
	}
	stop := anthropicStop(p.finish)
	return antWireMessage{
		ID: anthropicID(p.id), Type: "message", Role: "assistant", Model: p.model,
		Content: content, StopReason: &stop, Usage: f.usage(p),
	}
}

// usage is the usage reported for a plan: Step.Usage when set (its
// prompt tokens as input_tokens, its cached tokens as
// cache_read_input_tokens), else the estimate with the prompt cache
// applied. The cache sees every answered request either way.
func (f *anthropicFormat) usage(p plan) antWireUsage {
	var prefixes []cachePrefix
	if n, ok := p.native.(*anthropicNative); ok && n != nil {
		prefixes = n.prefixes
	}
	c := f.cache.use(prefixes)
	u := antWireUsage{OutputTokens: p.usage.CompletionTokens}
	if d := p.usage.CompletionTokensDetails; d != nil && d.ReasoningTokens > 0 {
		u.OutputTokensDetails = &antOutputDetails{ThinkingTokens: d.ReasoningTokens}
	}
	if p.step.Usage != nil {
		u.InputTokens = p.step.Usage.PromptTokens
		if d := p.step.Usage.PromptTokensDetails; d != nil {
			u.CacheReadInputTokens = d.CachedTokens
		}
		return u
	}
	total := max(p.usage.PromptTokens, c.read+c.write)
	u.CacheReadInputTokens, u.CacheCreationInputTokens = c.read, c.write
	u.InputTokens = total - c.read - c.write
	return u
}

// streamEvents is the event sequence of a streamed answer: message_start
// and a ping (lead); each block's content_block_start, deltas and
// content_block_stop (content); message_delta and message_stop (tail).
func (f *anthropicFormat) streamEvents(p plan) ([]sseEvent, error) {
	var events []sseEvent
	add := func(kind chunkKind, ev antWireEvent) error {
		b, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("encoding %s event: %w", ev.Type, err)
		}
		events = append(events, sseEvent{kind: kind, name: ev.Type, data: b})
		return nil
	}
	body := f.messageBody(p)
	start := body
	start.Content, start.StopReason = []antWireBlock{}, nil
	start.Usage.OutputTokens, start.Usage.OutputTokensDetails = 1, nil
	if err := add(chunkLead, antWireEvent{Type: "message_start", Message: &start}); err != nil {
		return nil, err
	}
	if err := add(chunkLead, antWireEvent{Type: "ping"}); err != nil {
		return nil, err
	}
	for i, block := range body.Content {
		index := i
		head, deltas := streamBlock(block, p.step.ChunkSize)
		if err := add(chunkContent, antWireEvent{Type: "content_block_start", Index: &index, ContentBlock: &head}); err != nil {
			return nil, err
		}
		for _, d := range deltas {
			if err := add(chunkContent, antWireEvent{Type: "content_block_delta", Index: &index, Delta: d}); err != nil {
				return nil, err
			}
		}
		if err := add(chunkContent, antWireEvent{Type: "content_block_stop", Index: &index}); err != nil {
			return nil, err
		}
	}
	usage := body.Usage
	delta := antWireEvent{Type: "message_delta", Delta: antStopDelta{StopReason: *body.StopReason}, Usage: &usage}
	if err := add(chunkTail, delta); err != nil {
		return nil, err
	}
	if err := add(chunkTail, antWireEvent{Type: "message_stop"}); err != nil {
		return nil, err
	}
	return events, nil
}

// streamBlock is how a block streams: the block content_block_start
// carries (its text or input empty) and the deltas that fill it in.
func streamBlock(b antWireBlock, chunkSize int) (antWireBlock, []antWireDelta) {
	empty := ""
	var deltas []antWireDelta
	switch b.Type {
	case "thinking":
		for _, piece := range splitText(*b.Thinking, chunkSize) {
			deltas = append(deltas, antWireDelta{Type: "thinking_delta", Thinking: &piece})
		}
		deltas = append(deltas, antWireDelta{Type: "signature_delta", Signature: b.Signature})
		return antWireBlock{Type: "thinking", Thinking: &empty, Signature: &empty}, deltas
	case "tool_use":
		for _, piece := range splitArguments(b.args, chunkSize) {
			deltas = append(deltas, antWireDelta{Type: "input_json_delta", PartialJSON: &piece})
		}
		return antWireBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: json.RawMessage("{}")}, deltas
	}
	for _, piece := range splitText(*b.Text, chunkSize) {
		deltas = append(deltas, antWireDelta{Type: "text_delta", Text: &piece})
	}
	return antWireBlock{Type: "text", Text: &empty}, deltas
}
