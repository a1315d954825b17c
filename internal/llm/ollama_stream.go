package llm

// This file reads Ollama's answers: a stream of NDJSON lines, each a
// JSON object with a piece of the message, the last one "done": true with
// the done reason and the token counts; or, for a request with "stream":
// false, that one object whole. Both are read as a sequence of JSON
// values, so a stream and a single answer take the same path.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// ollamaLine is one line of an answer (or the whole answer).
type ollamaLine struct {
	Model           string        `json:"model"`
	CreatedAt       string        `json:"created_at"`
	Message         ollamaMessage `json:"message"`
	Done            *bool         `json:"done"`
	DoneReason      string        `json:"done_reason"`
	PromptEvalCount int           `json:"prompt_eval_count"`
	EvalCount       int           `json:"eval_count"`
	Error           *string       `json:"error"`
}

// ollamaAnswer accumulates the lines of one answer.
type ollamaAnswer struct {
	content  strings.Builder
	thinking strings.Builder
	calls    []ollamaToolCall
	// model and createdAt are the first line's: with the request's
	// digest they make the ids of calls that come without one.
	model, createdAt string
	request          string
	done             bool
	doneReason       string
	prompt, eval     int
	// lines counts the lines read.
	lines int
}

// readOllama reads an answer from body: the reply once a "done": true
// line came; else what the answer amounts to (a cut-off reply, a body
// that is not Ollama's answer, an error line, the failure of the
// connection). Each line is progress (idle, OnChunk); its text goes to
// OnDelta when the call streams. requestDigest names the request, for
// the ids of calls.
func readOllama(ctx context.Context, body io.Reader, rec *headerRecorder, idle *idleTimer, opts Options, requestDigest string) (Reply, error) {
	dec := json.NewDecoder(body)
	a := &ollamaAnswer{request: requestDigest}
	for {
		var line ollamaLine
		if err := dec.Decode(&line); err != nil {
			return a.ended(ctx, err, rec)
		}
		if line.Error != nil {
			e := ollamaFailure(rec.last().status, *line.Error)
			e.Streamed = a.content.String()
			return Reply{Streamed: e.Streamed}, e
		}
		if line.Done == nil {
			r := rec.last()
			e := &Error{Class: turnapi.ClassInvalidResponse, Status: r.status,
				Message: invalidMessage(fmt.Sprintf("line %d is not a chat answer: it has no done field", a.lines+1), r)}
			e.Streamed = a.content.String()
			return Reply{Streamed: e.Streamed}, e
		}
		idle.touch()
		if opts.Stream && opts.OnChunk != nil {
			opts.OnChunk()
		}
		if delta := a.add(line); delta != "" && opts.Stream && opts.OnDelta != nil {
			opts.OnDelta(delta)
		}
		if a.done {
			return a.reply(), nil
		}
	}
}

// add takes one line; it returns the text it adds to the content.
func (a *ollamaAnswer) add(l ollamaLine) string {
	a.lines++
	if a.lines == 1 {
		a.model, a.createdAt = l.Model, l.CreatedAt
	}
	a.content.WriteString(l.Message.Content)
	a.thinking.WriteString(l.Message.Thinking)
	a.calls = append(a.calls, l.Message.ToolCalls...)
	if l.Done != nil && *l.Done {
		a.done, a.doneReason = true, l.DoneReason
		a.prompt, a.eval = l.PromptEvalCount, l.EvalCount
	}
	return l.Message.Content
}

// reply is the reply the lines amount to.
func (a *ollamaAnswer) reply() Reply {
	var calls []openai.ToolCall
	seen := map[string]bool{}
	for i, c := range a.calls {
		args := ollamaArgumentText(c.Function.Arguments)
		id := c.ID
		if id == "" || seen[id] {
			id = ollamaCallID(a.request, a.model, a.createdAt, i, c.Function.Name, args)
		}
		seen[id] = true
		calls = append(calls, openai.ToolCall{ID: id, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Function.Name, Arguments: args}})
	}
	thinking := a.thinking.String()
	return Reply{
		Content:      a.content.String(),
		Reasoning:    thinking,
		ToolCalls:    calls,
		FinishReason: ollamaFinish(a.doneReason, len(calls) > 0),
		Usage:        Usage{PromptTokens: a.prompt, CompletionTokens: a.eval},
		Replay:       ollamaReplay(thinking, len(calls)),
	}
}

// ended decides what an answer whose reading stopped with err before its
// done line amounts to: a body that is not Ollama's answer (nothing that
// reads as a line, or something that does not read at all), a cut-off
// reply (lines, then the end or a broken connection), or the failure.
func (a *ollamaAnswer) ended(ctx context.Context, err error, rec *headerRecorder) (Reply, error) {
	r := rec.last()
	var (
		e      *Error
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	// The body ended (io.EOF between lines, io.ErrUnexpectedEOF within
	// one) unless the connection failed under it: a transport reports a
	// connection closed mid-body as io.ErrUnexpectedEOF too.
	ended := r.body.Err == nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF))
	switch {
	case ctx.Err() != nil:
		e = classify(ctx, err, rec)
	case errors.As(err, &syntax), errors.As(err, &typ), ended && a.lines == 0:
		why := "the answer ended without a line"
		if !errors.Is(err, io.EOF) {
			why = err.Error()
		}
		e = &Error{Class: turnapi.ClassInvalidResponse, Status: r.status, Message: invalidMessage(why, r), Err: err}
	case ended:
		e = streamCut(a.lines, "lines", a.content.Len(), "its done line")
		e.Err = err
	default:
		e = streamBroke(classify(ctx, err, rec), a.lines, "lines", a.content.Len())
	}
	e.Streamed = a.content.String()
	return Reply{Streamed: e.Streamed}, e
}

// ollamaFinish is the chat-completions finish reason of a done reason:
// tool_calls when the answer calls tools, length for "length", stop for
// the rest ("stop", "load", reasons added later). Pure.
func ollamaFinish(doneReason string, calls bool) string {
	switch {
	case calls:
		return string(openai.FinishReasonToolCalls)
	case doneReason == "length":
		return string(openai.FinishReasonLength)
	}
	return string(openai.FinishReasonStop)
}

// ollamaArgumentText is a call's arguments as JSON text: the object
// compacted; "{}" for none; a string's own text (a server that sends the
// arguments encoded); anything else as it came, for the loop to refuse.
// Pure.
func ollamaArgumentText(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "" || s == "null":
		return "{}"
	case strings.HasPrefix(s, `"`):
		var text string
		if json.Unmarshal(raw, &text) == nil {
			if strings.TrimSpace(text) == "" {
				return "{}"
			}
			return text
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return s
}

// ollamaCallID is the id of a call that came without one: its position
// in the reply and a short digest of the request, the answer (model and
// time) and the call, so that it is the same for the same answer, unique
// within the reply, and different from the calls of other replies. Pure.
func ollamaCallID(request, model, createdAt string, index int, name, args string) string {
	h := sha256.New()
	for _, part := range []string{request, model, createdAt, strconv.Itoa(index), name, args} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return "call_" + strconv.Itoa(index) + "_" + hex.EncodeToString(h.Sum(nil)[:6])
}

// digestOf is a short digest of a request body, naming the request. Pure.
func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
