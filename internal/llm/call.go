//lint:file-ignore SA1019 max_tokens is the field OpenAI-compatible servers (and these wire formats) read; go-openai deprecates it only for OpenAI's o1 models

package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// chatProvider speaks OpenAI chat completions, with go-openai.
type chatProvider struct{ e Endpoint }

// Call sends req once. A stream that ends, or whose connection breaks, after some chunks but
// before a finish reason or the end-of-stream marker is a cut-off reply
// (ClassTruncatedReply, the text received so far in Error.Streamed); a body
// that is not the protocol is ClassInvalidResponse.
func (c chatProvider) Call(ctx context.Context, in Request, opts Options) (Reply, error) {
	ctx, idle := withIdleTimeout(ctx, opts.IdleTimeout)
	defer idle.stop()
	client, rec := newClient(c.e, withExtraBody(traced(ctx, opts.Transport), c.e.ExtraBody))
	req := openai.ChatCompletionRequest{Model: c.e.Model, Messages: in.Messages, Tools: in.Tools, MaxTokens: in.MaxTokens}
	if !opts.Stream {
		req.Stream = false
		resp, err := client.CreateChatCompletion(ctx, req)
		if err != nil {
			return Reply{}, classify(ctx, err, rec)
		}
		return replyFromResponse(resp, rec)
	}
	req.Stream = true
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	stream, err := client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return Reply{}, classify(ctx, err, rec)
	}
	defer stream.Close()
	acc := newAccumulator()
	for {
		chunk, err := stream.Recv()
		if err != nil {
			return acc.ended(ctx, err, rec)
		}
		idle.touch()
		if opts.OnChunk != nil {
			opts.OnChunk()
		}
		if delta := acc.add(chunk); delta != "" && opts.OnDelta != nil {
			opts.OnDelta(delta)
		}
	}
}

// ended decides what a stream that stopped with err (io.EOF at its end)
// amounts to: the reply, when a finish reason or the end marker came; a
// cut-off reply; a body that was not the protocol; or the failure itself.
func (a *accumulator) ended(ctx context.Context, err error, rec *headerRecorder) (Reply, error) {
	r := rec.last()
	if ctx.Err() == nil && (a.finish != "" || (errors.Is(err, io.EOF) && r.body.Done)) {
		return a.reply(), nil
	}
	var e *Error
	if errors.Is(err, io.EOF) {
		e = &Error{Err: err}
		switch {
		case a.chunks == 0:
			e.Class, e.Status = turnapi.ClassInvalidResponse, r.status
			e.Message = invalidMessage("the stream ended without a chunk", r)
		default:
			e = streamCut(a.chunks, "chunks", a.content.Len(), "a finish reason")
			e.Err = err
		}
	} else {
		e = streamBroke(classify(ctx, err, rec), a.chunks, "chunks", a.content.Len())
	}
	e.Streamed = a.content.String()
	return Reply{Streamed: e.Streamed}, e
}

func replyFromResponse(resp openai.ChatCompletionResponse, rec *headerRecorder) (Reply, error) {
	if len(resp.Choices) == 0 {
		r := rec.last()
		return Reply{Usage: chatUsage(resp.Usage)}, &Error{Class: turnapi.ClassInvalidResponse, Status: r.status,
			Message: invalidMessage("it has no choices", r)}
	}
	c := resp.Choices[0]
	return Reply{
		Content:      c.Message.Content,
		Reasoning:    c.Message.ReasoningContent,
		ToolCalls:    c.Message.ToolCalls,
		FinishReason: string(c.FinishReason),
		Usage:        chatUsage(resp.Usage),
	}, nil
}

// Ping checks that the endpoint answers HTTP at all (any status counts),
// so an unreachable endpoint is reported before a turn starts.
func Ping(ctx context.Context, p Endpoint) error {
	client, _ := newClient(p, nil)
	_, err := client.ListModels(ctx)
	if err == nil {
		return nil
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	if errors.As(err, &apiErr) || errors.As(err, &reqErr) || errors.Is(err, errNotProtocol) {
		return nil // it answered, even if with an error status or a page
	}
	// The error names the URL it asked, which may hold a key (user info, a
	// query): it is said with the URL redacted.
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // the cause, without the URL
	}
	why := strings.ReplaceAll(err.Error(), p.BaseURL, RedactURL(p.BaseURL))
	return fmt.Errorf("model endpoint %s is unreachable: %s", RedactURL(p.BaseURL), why)
}

// accumulator reassembles a streamed reply.
type accumulator struct {
	content   strings.Builder
	reasoning strings.Builder
	calls     map[int]*openai.ToolCall
	finish    string
	usage     openai.Usage
	// chunks counts the chunks received.
	chunks int
}

func newAccumulator() *accumulator { return &accumulator{calls: map[int]*openai.ToolCall{}} }

func (a *accumulator) add(chunk openai.ChatCompletionStreamResponse) string {
	a.chunks++
	if chunk.Usage != nil {
		a.usage = *chunk.Usage
	}
	var delta string
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue
		}
		delta += ch.Delta.Content
		a.content.WriteString(ch.Delta.Content)
		a.reasoning.WriteString(ch.Delta.ReasoningContent)
		for _, tc := range ch.Delta.ToolCalls {
			idx := len(a.calls)
			if tc.Index != nil {
				idx = *tc.Index
			}
			cur, ok := a.calls[idx]
			if !ok {
				cur = &openai.ToolCall{Type: openai.ToolTypeFunction}
				a.calls[idx] = cur
			}
			if tc.ID != "" {
				cur.ID = tc.ID
			}
			if tc.Type != "" {
				cur.Type = tc.Type
			}
			cur.Function.Name += tc.Function.Name
			cur.Function.Arguments += tc.Function.Arguments
		}
		if ch.FinishReason != "" {
			a.finish = string(ch.FinishReason)
		}
	}
	return delta
}

func (a *accumulator) reply() Reply {
	idx := slices.Sorted(maps.Keys(a.calls))
	calls := make([]openai.ToolCall, 0, len(idx))
	for _, i := range idx {
		calls = append(calls, *a.calls[i])
	}
	if len(calls) == 0 {
		calls = nil
	}
	return Reply{
		Content:      a.content.String(),
		Reasoning:    a.reasoning.String(),
		ToolCalls:    calls,
		FinishReason: a.finish,
		Usage:        chatUsage(a.usage),
	}
}

// chatUsage is a chat completion's usage, normalised. Pure.
func chatUsage(u openai.Usage) Usage {
	out := Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CacheReadTokens = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		out.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	}
	return out
}
