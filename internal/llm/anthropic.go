package llm

// This file holds the Anthropic Messages provider: the client of one call,
// the call itself (plain or streamed) and the reply read from a message.

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// defaultAnthropicURL is the base URL of an Anthropic endpoint that names
// none.
const defaultAnthropicURL = "https://api.anthropic.com"

// anthropicJSONTimeout is the per-request timeout given to the SDK for a
// plain (non-streamed) call. Without one the SDK refuses a plain call
// whose max_tokens suggests more than ten minutes of work; the call is
// bounded by its context and Options.IdleTimeout instead, as for the
// other providers.
const anthropicJSONTimeout = time.Hour

// anthropicProvider speaks Anthropic Messages, with the official
// anthropic-sdk-go SDK.
type anthropicProvider struct{ e Endpoint }

// Call sends req once, as a plain request or (opts.Stream) a stream. A
// stream that ends, or whose connection breaks, after some events but
// before its stop reason or message_stop is a cut-off reply
// (ClassTruncatedReply, the text received so far in Error.Streamed); a
// body that is not the protocol is ClassInvalidResponse; an error event
// in a stream is classified like the HTTP error of its type. It never
// retries.
func (p anthropicProvider) Call(ctx context.Context, in Request, opts Options) (Reply, error) {
	ctx, idle := withIdleTimeout(ctx, opts.IdleTimeout)
	defer idle.stop()
	params, err := anthropicParams(p.e, in)
	if err != nil {
		return Reply{}, &Error{Class: turnapi.ClassBadRequest, Message: "building the request: " + err.Error(), Err: err}
	}
	svc, rec := newAnthropicClient(p.e, withExtraBody(traced(ctx, opts.Transport), p.e.ExtraBody))
	if !opts.Stream {
		msg, err := svc.New(ctx, params, option.WithRequestTimeout(anthropicJSONTimeout))
		if err != nil {
			return Reply{}, classifyAnthropic(ctx, err, rec)
		}
		return anthropicReply(msg, rec)
	}
	stream := svc.NewStreaming(ctx, params)
	defer func() { _ = stream.Close() }()
	acc := newAnthropicStream()
	for stream.Next() {
		idle.touch()
		if opts.OnChunk != nil {
			opts.OnChunk()
		}
		if delta := acc.add(stream.Current()); delta != "" && opts.OnDelta != nil {
			opts.OnDelta(delta)
		}
		if acc.done {
			break
		}
	}
	return acc.ended(ctx, stream.Err(), rec)
}

// newAnthropicClient builds the Messages service of one call: the key,
// the base URL, no retries (the workflow retries), the shared
// headerRecorder as its HTTP client over transport, and none of the SDK's
// own telemetry (the transport traces the call; nothing about the trace
// is sent to the provider). It is built without the SDK's environment
// defaults, so no ANTHROPIC_* variable of the worker reaches the request.
func newAnthropicClient(e Endpoint, transport http.RoundTripper) (anthropic.MessageService, *headerRecorder) {
	rec := &headerRecorder{base: http.Client{Transport: transport}}
	base, query := splitQuery(e.BaseURL)
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(anthropicBaseURL(base)),
		option.WithMaxRetries(0),
		option.WithHTTPClient(rec),
		option.WithoutOpenTelemetry(),
	}
	for _, kv := range query {
		opts = append(opts, option.WithQueryAdd(kv[0], kv[1]))
	}
	if e.APIKey != "" {
		// The SDK sends the key as a bearer token; the Messages API
		// documents x-api-key, which proxies in front of it read: both go.
		opts = append(opts, option.WithAPIKey(e.APIKey), option.WithHeader("x-api-key", e.APIKey))
	}
	client := anthropic.NewClient(opts...)
	return client.Messages, rec
}

// anthropicBaseURL is the SDK's base URL for an endpoint's: the root the
// SDK adds "v1/messages" to, so a base URL given with or without its
// trailing /v1 works. Pure.
func anthropicBaseURL(raw string) string {
	base := cmp.Or(strings.TrimRight(strings.TrimSpace(raw), "/"), defaultAnthropicURL)
	return strings.TrimSuffix(base, "/v1") + "/"
}

// anthropicThinking is one thinking or redacted_thinking block as
// Replay.Data keeps it, in the API's own shape.
type anthropicThinking struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

// thinkingReplay is the replay state of a reply's thinking blocks; nil
// when there are none. Pure.
func thinkingReplay(blocks []anthropicThinking) *Replay {
	if len(blocks) == 0 {
		return nil
	}
	data, err := json.Marshal(blocks)
	if err != nil {
		return nil // strings only: cannot fail
	}
	return &Replay{Wire: WireAnthropic, Data: data}
}

// anthropicReply reads the reply of a complete message; a body that is no
// message is ClassInvalidResponse.
func anthropicReply(m *anthropic.Message, rec *headerRecorder) (Reply, error) {
	if m == nil || !m.JSON.Content.Valid() {
		r := rec.last()
		return Reply{}, &Error{Class: turnapi.ClassInvalidResponse, Status: r.status,
			Message: invalidMessage("it is not a message: it has no content", r)}
	}
	var (
		out      Reply
		thinking []anthropicThinking
	)
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			out.Content += b.Text
		case "thinking":
			out.Reasoning = joinReasoning(out.Reasoning, b.Thinking)
			thinking = append(thinking, anthropicThinking{Type: "thinking", Thinking: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			thinking = append(thinking, anthropicThinking{Type: "redacted_thinking", Data: b.Data})
		case "tool_use":
			out.ToolCalls = append(out.ToolCalls, openai.ToolCall{
				ID:       b.ID,
				Type:     openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: b.Name, Arguments: toolArguments(string(b.Input))},
			})
		}
	}
	out.FinishReason = anthropicFinish(string(m.StopReason))
	u := m.Usage
	out.Usage = anthropicUsage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens,
		u.OutputTokens, u.OutputTokensDetails.ThinkingTokens)
	out.Replay = thinkingReplay(thinking)
	return out, nil
}

// toolArguments is a tool_use input as argument text: "{}" when there is
// none. Pure.
func toolArguments(input string) string {
	if s := strings.TrimSpace(input); s == "" || s == "null" {
		return "{}"
	}
	return input
}

// joinReasoning appends the text of one more thinking block to the
// reasoning so far, a blank line between them. Pure.
func joinReasoning(sofar, more string) string {
	switch {
	case sofar == "":
		return more
	case more == "":
		return sofar
	}
	return sofar + "\n\n" + more
}

// anthropicFinish maps a stop_reason to the chat-completions finish
// reason: stop, length, tool_calls or content_filter ("" stays ""). Pure.
func anthropicFinish(stop string) string {
	switch anthropic.StopReason(stop) {
	case "":
		return ""
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		return string(openai.FinishReasonLength)
	case anthropic.StopReasonToolUse:
		return string(openai.FinishReasonToolCalls)
	case anthropic.StopReasonRefusal:
		return string(openai.FinishReasonContentFilter)
	}
	// end_turn, stop_sequence, pause_turn and any reason added later.
	return string(openai.FinishReasonStop)
}

// anthropicUsage normalises Anthropic usage: PromptTokens counts the
// uncached input and the tokens read from and written to the cache. Pure.
func anthropicUsage(input, cacheRead, cacheWrite, output, thinking int64) Usage {
	return Usage{
		PromptTokens:     int(input + cacheRead + cacheWrite),
		CompletionTokens: int(output),
		CacheReadTokens:  int(cacheRead),
		CacheWriteTokens: int(cacheWrite),
		ReasoningTokens:  int(thinking),
	}
}
