package llm

// This file reassembles a streamed Responses API answer from its events.

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// responsesStream reassembles a streamed response: the text and
// reasoning as they arrive, the output items by their index, and the
// final response object once response.completed or response.incomplete
// came.
type responsesStream struct {
	// events counts the events received; known those of the protocol.
	events, known int
	content       strings.Builder
	reasoning     strings.Builder
	rawReasoning  strings.Builder
	// summaryKey names the reasoning summary part the last summary delta
	// belonged to: a new part is set off by a blank line.
	summaryKey string
	items      map[int64]*streamItem
	final      *responses.Response
}

// streamItem is one output item of a stream: a function call or a
// reasoning item.
type streamItem struct {
	kind      string
	call      openai.ToolCall
	reasoning responsesReasoning
}

// add takes one event. It returns the content text it carried, whether
// it ended the response, and the error it reported (response.failed, an
// error event).
func (a *responsesStream) add(ev responses.ResponseStreamEventUnion) (delta string, done bool, failed *Error) {
	a.events++
	if ev.Type == "error" || strings.HasPrefix(ev.Type, "response.") {
		a.known++
	}
	switch ev.Type {
	case "response.output_text.delta", "response.refusal.delta":
		a.content.WriteString(ev.Delta)
		return ev.Delta, false, nil
	case "response.reasoning_summary_text.delta":
		key := ev.ItemID + "/" + strconv.FormatInt(ev.SummaryIndex, 10)
		if a.reasoning.Len() > 0 && key != a.summaryKey {
			a.reasoning.WriteString("\n\n")
		}
		a.summaryKey = key
		a.reasoning.WriteString(ev.Delta)
	case "response.reasoning_text.delta":
		a.rawReasoning.WriteString(ev.Delta)
	case "response.output_item.added", "response.output_item.done":
		a.item(ev.OutputIndex, ev.Item)
	case "response.function_call_arguments.delta":
		if it := a.items[ev.OutputIndex]; it != nil && it.kind == "function_call" {
			it.call.Function.Arguments += ev.Delta
		}
	case "response.function_call_arguments.done":
		if it := a.items[ev.OutputIndex]; it != nil && it.kind == "function_call" {
			it.call.Function.Arguments = ev.Arguments
		}
	case "response.completed", "response.incomplete":
		resp := ev.Response
		a.final = &resp
		return "", true, nil
	case "response.failed":
		return "", false, failedResponse(string(ev.Response.Error.Code), ev.Response.Error.Message)
	case "error":
		return "", false, failedResponse(ev.Code, ev.Message)
	}
	return "", false, nil
}

// item records an output item as it was announced or finished; a
// finished item replaces what its deltas built.
func (a *responsesStream) item(index int64, item responses.ResponseOutputItemUnion) {
	if a.items == nil {
		a.items = map[int64]*streamItem{}
	}
	switch item.Type {
	case "function_call":
		it := &streamItem{kind: item.Type, call: openai.ToolCall{
			ID:       item.CallID,
			Type:     openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: item.Name, Arguments: item.Arguments.OfString},
		}}
		if old := a.items[index]; old != nil && it.call.Function.Arguments == "" {
			it.call.Function.Arguments = old.call.Function.Arguments
		}
		a.items[index] = it
	case "reasoning":
		r := responsesReasoning{ID: item.ID, EncryptedContent: item.EncryptedContent}
		for _, s := range item.Summary {
			r.Summary = append(r.Summary, s.Text)
		}
		a.items[index] = &streamItem{kind: item.Type, reasoning: r}
	}
}

// reply is the reply of a finished stream: the final response object's,
// when it lists its output (it does, from OpenAI), else the one the
// events built.
func (a *responsesStream) reply() Reply {
	if a.final != nil && len(a.final.Output) > 0 {
		return outputReply(*a.final)
	}
	idx := slices.Sorted(maps.Keys(a.items))
	var (
		calls     []openai.ToolCall
		reasoning []responsesReasoning
	)
	for _, i := range idx {
		switch it := a.items[i]; it.kind {
		case "function_call":
			calls = append(calls, it.call)
		case "reasoning":
			reasoning = append(reasoning, it.reasoning)
		}
	}
	thought := cmp.Or(a.reasoning.String(), a.rawReasoning.String())
	r := Reply{
		Content:   a.content.String(),
		Reasoning: thought,
		ToolCalls: calls,
		Replay:    reasoningReplay(reasoning),
	}
	if a.final != nil {
		r.FinishReason = responsesFinish(string(a.final.Status), a.final.IncompleteDetails.Reason, len(calls) > 0)
		r.Usage = responsesUsage(a.final.Usage)
	}
	return r
}

// ended decides what a stream that stopped before its final event amounts
// to: a cut-off reply, a body that was not the protocol, an error event
// the SDK refused to decode, or the failure itself (err nil: the body
// ended cleanly).
func (a *responsesStream) ended(ctx context.Context, err error, rec *headerRecorder) (Reply, error) {
	var (
		e      *Error
		stream *ssestream.StreamError
	)
	switch {
	case err != nil && ctx.Err() == nil && errors.As(err, &stream):
		code, message := streamErrorBody(stream.Event.Data)
		e = failedResponse(code, message)
		e.Err = err
	case err != nil:
		e = classifyResponses(ctx, err, rec)
		if a.known > 0 {
			e = streamBroke(e, a.events, "events", a.content.Len())
		}
	case a.known == 0:
		r := rec.last()
		e = &Error{Class: turnapi.ClassInvalidResponse, Status: r.status,
			Message: invalidMessage("the stream ended without a Responses API event", r)}
	default:
		e = streamCut(a.events, "events", a.content.Len(), "the end of the response")
	}
	e.Streamed = a.content.String()
	return Reply{Streamed: e.Streamed}, e
}
