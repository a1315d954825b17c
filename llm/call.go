package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Reply is a model's complete answer to one request.
type Reply struct {
	Content      string
	Reasoning    string
	ToolCalls    []openai.ToolCall
	FinishReason string
	Usage        openai.Usage
	// Streamed is the text received before a stream broke (set with an error).
	Streamed string
}

// Options tune one call.
type Options struct {
	// Stream uses SSE streaming; OnDelta receives each content delta.
	Stream  bool
	OnDelta func(content string)
	// Transport overrides the HTTP transport (nil: http.DefaultTransport).
	Transport http.RoundTripper
}

// Call sends req to p once. The returned error, when not nil, is an *Error.
func Call(ctx context.Context, p Provider, req openai.ChatCompletionRequest, opts Options) (Reply, error) {
	client, rec := newClient(p, opts.Transport)
	req.Model = p.Model
	if !opts.Stream {
		req.Stream = false
		resp, err := client.CreateChatCompletion(ctx, req)
		if err != nil {
			return Reply{}, classify(ctx, err, rec)
		}
		return replyFromResponse(resp)
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
		if errors.Is(err, io.EOF) {
			return acc.reply(), nil
		}
		if err != nil {
			e := classify(ctx, err, rec)
			e.Streamed = acc.content.String()
			return Reply{Streamed: e.Streamed}, e
		}
		if delta := acc.add(chunk); delta != "" && opts.OnDelta != nil {
			opts.OnDelta(delta)
		}
	}
}

func replyFromResponse(resp openai.ChatCompletionResponse) (Reply, error) {
	if len(resp.Choices) == 0 {
		return Reply{Usage: resp.Usage}, &Error{Class: ClassServer, Message: "the model returned no choices"}
	}
	c := resp.Choices[0]
	return Reply{
		Content:      c.Message.Content,
		Reasoning:    c.Message.ReasoningContent,
		ToolCalls:    c.Message.ToolCalls,
		FinishReason: string(c.FinishReason),
		Usage:        resp.Usage,
	}, nil
}

// Ping checks that the endpoint answers HTTP at all (any status counts),
// so an unreachable endpoint is reported before a turn starts.
func Ping(ctx context.Context, p Provider) error {
	client, _ := newClient(p, nil)
	_, err := client.ListModels(ctx)
	if err == nil {
		return nil
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	if errors.As(err, &apiErr) || errors.As(err, &reqErr) {
		return nil // it answered, even if with an error status
	}
	return fmt.Errorf("model endpoint %s is unreachable: %w", p.BaseURL, err)
}

// accumulator reassembles a streamed reply.
type accumulator struct {
	content   strings.Builder
	reasoning strings.Builder
	calls     map[int]*openai.ToolCall
	finish    string
	usage     openai.Usage
}

func newAccumulator() *accumulator { return &accumulator{calls: map[int]*openai.ToolCall{}} }

func (a *accumulator) add(chunk openai.ChatCompletionStreamResponse) string {
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
	idx := make([]int, 0, len(a.calls))
	for i := range a.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
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
		Usage:        a.usage,
	}
}
