package llm

// This file holds the OpenAI Responses API provider: the client of one
// call and the reply read from a response object.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// defaultResponsesURL is the base URL of an endpoint that names none.
const defaultResponsesURL = "https://api.openai.com/v1"

// responsesProvider speaks the OpenAI Responses API, with the official
// openai-go SDK. It is stateless: nothing is stored at the provider
// (store=false); the encrypted reasoning of a reply travels back in
// Reply.Replay and the next requests.
type responsesProvider struct{ e Endpoint }

// Call sends req once, as a plain request or (opts.Stream) a stream. A
// stream that ends, or whose connection breaks, after some events but
// before response.completed or response.incomplete is a cut-off reply
// (ClassTruncatedReply, the text received so far in Error.Streamed); a
// body that is not the protocol is ClassInvalidResponse; response.failed
// and error events are classified like HTTP errors. It never retries.
//
// What the endpoint refuses for the model of the optional parts (the
// encrypted reasoning, which models without reasoning refuse; reasoning
// summaries, which an unverified organisation may not have) is left out
// and the request sent again at once, and left out of every later request
// of this process to that endpoint and model.
func (p responsesProvider) Call(ctx context.Context, in Request, opts Options) (Reply, error) {
	omit := refusedParts(p.e)
	for {
		reply, err := p.call(ctx, in, opts, omit)
		next, again := omitRefused(omit, reply, err)
		if !again {
			return reply, err
		}
		omit = next
		rememberRefused(p.e, omit)
	}
}

// call is one request, without the parts in omit.
func (p responsesProvider) call(ctx context.Context, in Request, opts Options, omit responsesOmit) (Reply, error) {
	ctx, idle := withIdleTimeout(ctx, opts.IdleTimeout)
	defer idle.stop()
	params, err := responsesParams(p.e, in, omit)
	if err != nil {
		return Reply{}, &Error{Class: turnapi.ClassBadRequest, Message: "building the request: " + err.Error(), Err: err}
	}
	svc, rec := newResponsesClient(p.e, withExtraBody(traced(ctx, opts.Transport), p.e.ExtraBody))
	if !opts.Stream {
		resp, err := svc.New(ctx, params)
		if err != nil {
			return Reply{}, classifyResponses(ctx, err, rec)
		}
		return replyFromResponses(resp, rec)
	}
	stream := svc.NewStreaming(ctx, params)
	defer func() { _ = stream.Close() }()
	acc := &responsesStream{}
	for stream.Next() {
		idle.touch()
		if opts.OnChunk != nil {
			opts.OnChunk()
		}
		delta, done, failed := acc.add(stream.Current())
		if delta != "" && opts.OnDelta != nil {
			opts.OnDelta(delta)
		}
		if failed != nil {
			failed.Streamed = acc.content.String()
			return Reply{Streamed: failed.Streamed}, failed
		}
		if done {
			return acc.reply(), nil
		}
	}
	return acc.ended(ctx, stream.Err(), rec)
}

// newResponsesClient builds the Responses service of one call: the key,
// the base URL, no retries (the workflow retries), and the shared
// headerRecorder as its HTTP client over transport. It is built without
// the SDK's environment defaults, so no OPENAI_* variable of the worker
// reaches the request.
func newResponsesClient(e Endpoint, transport http.RoundTripper) (responses.ResponseService, *headerRecorder) {
	base, query := splitQuery(e.BaseURL)
	if base = strings.TrimRight(base, "/"); base == "" {
		base = defaultResponsesURL
	}
	rec := &headerRecorder{base: http.Client{Transport: transport}}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithAPIKey(e.APIKey),
		option.WithMaxRetries(0),
		option.WithHTTPClient(rec),
	}
	for _, kv := range query {
		opts = append(opts, option.WithQueryAdd(kv[0], kv[1]))
	}
	return responses.NewResponseService(opts...), rec
}

// replyFromResponses reads the reply of a complete response object; a
// failed response is its error, a body that is no response object
// ClassInvalidResponse.
func replyFromResponses(resp *responses.Response, rec *headerRecorder) (Reply, error) {
	if resp == nil || (resp.ID == "" && resp.Status == "" && len(resp.Output) == 0) {
		r := rec.last()
		return Reply{}, &Error{Class: turnapi.ClassInvalidResponse, Status: r.status,
			Message: invalidMessage("it is not a response object", r)}
	}
	switch resp.Status {
	case responses.ResponseStatusFailed:
		return Reply{Usage: responsesUsage(resp.Usage)}, failedResponse(string(resp.Error.Code), resp.Error.Message)
	case responses.ResponseStatusCancelled:
		return Reply{}, &Error{Class: turnapi.ClassServer, Message: "the response was cancelled by the provider"}
	case responses.ResponseStatusQueued, responses.ResponseStatusInProgress:
		r := rec.last()
		return Reply{}, &Error{Class: turnapi.ClassInvalidResponse, Status: r.status,
			Message: invalidMessage(fmt.Sprintf("the response is not finished (status %s)", printable(string(resp.Status), 40)), r)}
	}
	return outputReply(*resp), nil
}

// outputReply is the reply a finished response object holds: the text of
// its messages, the summaries of its reasoning, its function calls, the
// reasoning items to replay, the finish reason and usage. Pure.
func outputReply(resp responses.Response) Reply {
	var (
		content   strings.Builder
		summaries []string
		raw       []string
		calls     []openai.ToolCall
		reasoning []responsesReasoning
	)
	for _, item := range resp.Output {
		switch item.Type {
		case "message":
			for _, c := range item.Content {
				switch c.Type {
				case "output_text":
					content.WriteString(c.Text)
				case "refusal":
					content.WriteString(c.Refusal)
				}
			}
		case "reasoning":
			r := responsesReasoning{ID: item.ID, EncryptedContent: item.EncryptedContent}
			for _, s := range item.Summary {
				r.Summary = append(r.Summary, s.Text)
				if s.Text != "" {
					summaries = append(summaries, s.Text)
				}
			}
			for _, c := range item.Content {
				if c.Type == "reasoning_text" && c.Text != "" {
					raw = append(raw, c.Text)
				}
			}
			reasoning = append(reasoning, r)
		case "function_call":
			calls = append(calls, openai.ToolCall{
				ID:       item.CallID,
				Type:     openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: item.Name, Arguments: item.Arguments.OfString},
			})
		}
	}
	if len(summaries) == 0 {
		summaries = raw // models that show their reasoning instead of a summary
	}
	reply := Reply{
		Content:      content.String(),
		Reasoning:    strings.Join(summaries, "\n\n"),
		ToolCalls:    calls,
		FinishReason: responsesFinish(string(resp.Status), resp.IncompleteDetails.Reason, len(calls) > 0),
		Usage:        responsesUsage(resp.Usage),
		Replay:       reasoningReplay(reasoning),
	}
	return reply
}

// reasoningReplay is the Replay of a response's reasoning items; nil when
// there are none. Pure.
func reasoningReplay(items []responsesReasoning) *Replay {
	if len(items) == 0 {
		return nil
	}
	data, err := json.Marshal(items)
	if err != nil {
		return nil // plain strings always encode
	}
	return &Replay{Wire: WireResponses, Data: data}
}

// responsesFinish is the chat-completions finish reason of a response's
// status and incomplete reason. Pure.
func responsesFinish(status, incomplete string, calls bool) string {
	if status == string(responses.ResponseStatusIncomplete) {
		if incomplete == "content_filter" {
			return string(openai.FinishReasonContentFilter)
		}
		return string(openai.FinishReasonLength) // max_output_tokens, or a reason not known yet
	}
	if calls {
		return string(openai.FinishReasonToolCalls)
	}
	return string(openai.FinishReasonStop)
}

// responsesUsage is a response's usage, normalised: the input tokens
// already count the cached ones. Pure.
func responsesUsage(u responses.ResponseUsage) Usage {
	return Usage{
		PromptTokens:     int(u.InputTokens),
		CompletionTokens: int(u.OutputTokens),
		CacheReadTokens:  int(u.InputTokensDetails.CachedTokens),
		CacheWriteTokens: int(u.InputTokensDetails.CacheWriteTokens),
		ReasoningTokens:  int(u.OutputTokensDetails.ReasoningTokens),
	}
}
