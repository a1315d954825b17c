package llm

// This file reassembles a streamed Anthropic message from its events and
// decides what a stream that stopped amounts to.

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// anthropicStream accumulates the events of one streamed message.
type anthropicStream struct {
	content strings.Builder
	blocks  map[int64]*streamBlock
	stop    string
	// done: message_stop was read.
	done bool
	// events counts the events received.
	events int
	// usage, as message_start and message_delta report it.
	input, cacheRead, cacheWrite, output, thinking int64
}

// streamBlock is one content block of a streamed message.
type streamBlock struct {
	kind      string
	text      strings.Builder // text or thinking
	signature string
	data      string // redacted thinking
	id, name  string
	args      strings.Builder
	// input is the tool input of content_block_start, used when no
	// input_json_delta follows.
	input any
}

func newAnthropicStream() *anthropicStream {
	return &anthropicStream{blocks: map[int64]*streamBlock{}}
}

// block is the block at index, created of kind when it did not start.
func (a *anthropicStream) block(index int64, kind string) *streamBlock {
	b, ok := a.blocks[index]
	if !ok {
		b = &streamBlock{kind: kind}
		a.blocks[index] = b
	}
	return b
}

// add takes one event; it returns the text it adds to the reply's content.
func (a *anthropicStream) add(ev anthropic.MessageStreamEventUnion) string {
	a.events++
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		a.input, a.cacheRead, a.cacheWrite = u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens
		a.output, a.thinking = u.OutputTokens, u.OutputTokensDetails.ThinkingTokens
	case "content_block_start":
		cb := ev.ContentBlock
		b := a.block(ev.Index, cb.Type)
		switch cb.Type {
		case "text":
			b.text.WriteString(cb.Text)
			a.content.WriteString(cb.Text)
			return cb.Text
		case "thinking":
			b.text.WriteString(cb.Thinking)
			b.signature += cb.Signature
		case "redacted_thinking":
			b.data = cb.Data
		case "tool_use":
			b.id, b.name, b.input = cb.ID, cb.Name, cb.Input
		}
	case "content_block_delta":
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			a.block(ev.Index, "text").text.WriteString(d.Text)
			a.content.WriteString(d.Text)
			return d.Text
		case "thinking_delta":
			a.block(ev.Index, "thinking").text.WriteString(d.Thinking)
		case "signature_delta":
			b := a.block(ev.Index, "thinking")
			b.signature += d.Signature
		case "input_json_delta":
			a.block(ev.Index, "tool_use").args.WriteString(d.PartialJSON)
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			a.stop = string(ev.Delta.StopReason)
		}
		u := ev.Usage
		// The counts of message_delta are cumulative; those it leaves at
		// zero keep what message_start said.
		for _, f := range []struct {
			dst *int64
			v   int64
		}{{&a.input, u.InputTokens}, {&a.cacheRead, u.CacheReadInputTokens}, {&a.cacheWrite, u.CacheCreationInputTokens},
			{&a.output, u.OutputTokens}, {&a.thinking, u.OutputTokensDetails.ThinkingTokens}} {
			if f.v > 0 {
				*f.dst = f.v
			}
		}
	case "message_stop":
		a.done = true
	}
	return ""
}

// reply is the message the events amount to.
func (a *anthropicStream) reply() Reply {
	idx := slices.Sorted(maps.Keys(a.blocks))
	out := Reply{Content: a.content.String(), FinishReason: anthropicFinish(a.stop)}
	var thinking []anthropicThinking
	for _, i := range idx {
		b := a.blocks[i]
		switch b.kind {
		case "thinking":
			out.Reasoning = joinReasoning(out.Reasoning, b.text.String())
			thinking = append(thinking, anthropicThinking{Type: "thinking", Thinking: b.text.String(), Signature: b.signature})
		case "redacted_thinking":
			thinking = append(thinking, anthropicThinking{Type: "redacted_thinking", Data: b.data})
		case "tool_use":
			args := b.args.String()
			if strings.TrimSpace(args) == "" && b.input != nil {
				if data, err := json.Marshal(b.input); err == nil {
					args = string(data)
				}
			}
			out.ToolCalls = append(out.ToolCalls, openai.ToolCall{
				ID:       b.id,
				Type:     openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: b.name, Arguments: toolArguments(args)},
			})
		}
	}
	out.Usage = anthropicUsage(a.input, a.cacheRead, a.cacheWrite, a.output, a.thinking)
	out.Replay = thinkingReplay(thinking)
	return out
}

// ended decides what a stream that stopped with err (nil at the clean end
// of the body) amounts to: the reply, when its stop reason or
// message_stop came; a body that was not the protocol; a cut-off reply;
// or the failure itself.
func (a *anthropicStream) ended(ctx context.Context, err error, rec *headerRecorder) (Reply, error) {
	if ctx.Err() == nil && (a.stop != "" || a.done) {
		return a.reply(), nil
	}
	var e *Error
	switch {
	case ctx.Err() != nil && err == nil:
		e = classifyAnthropic(ctx, ctx.Err(), rec)
	case err == nil && a.events == 0:
		r := rec.last()
		e = &Error{Class: turnapi.ClassInvalidResponse, Status: r.status,
			Message: invalidMessage("the stream ended without an event", r)}
	case err == nil:
		e = streamCut(a.events, "events", a.content.Len(), "a stop reason")
	default:
		e = streamBroke(classifyAnthropic(ctx, err, rec), a.events, "events", a.content.Len())
	}
	e.Streamed = a.content.String()
	return Reply{Streamed: e.Streamed}, e
}
