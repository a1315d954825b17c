package llm

// What the providers share: the conversion of function tools, the errors
// of a stream that stopped before its end, and the classification of an
// SDK's failure that is not one of its API errors.

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// functionTools converts a request's function tools with conv, given each
// one's definition and its parameters as a JSON schema object; tools of
// other types are skipped.
func functionTools[T any](tools []openai.Tool, conv func(fn *openai.FunctionDefinition, schema map[string]any) T) ([]T, error) {
	var out []T
	for _, t := range tools {
		if t.Function == nil || (t.Type != "" && t.Type != openai.ToolTypeFunction) {
			continue
		}
		schema, err := toolSchema(t.Function.Parameters)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Function.Name, err)
		}
		out = append(out, conv(t.Function, schema))
	}
	return out, nil
}

// streamCut is the error of a stream that ended cleanly after n units
// (chunks, events, lines) and text characters of text, without its end
// (missing says what: "a finish reason"). Pure.
func streamCut(n int, unit string, text int, missing string) *Error {
	return &Error{Class: turnapi.ClassTruncatedReply,
		Message: fmt.Sprintf("the reply was cut off: the stream ended after %d %s (%d characters of text) without %s",
			n, unit, text, missing)}
}

// streamBroke makes a network failure after n units of a stream a cut-off
// reply: the answer began and did not end. Other failures are as they are.
func streamBroke(e *Error, n int, unit string, text int) *Error {
	if e.Class == turnapi.ClassNetwork && n > 0 {
		e.Class = turnapi.ClassTruncatedReply
		e.Message = fmt.Sprintf("the reply was cut off: the stream broke after %d %s (%d characters of text): %s",
			n, unit, text, e.Message)
	}
	return e
}

// apiFailure is the *Error of an error answer an SDK decoded: its status,
// the provider's message (the body's text when it has none), code and
// type.
func apiFailure(rec *headerRecorder, status int, msg, code, typ string, err error) *Error {
	r := rec.last()
	if msg = strings.TrimSpace(msg); msg == "" && status >= 400 {
		msg = bodyText(r, status)
	}
	return &Error{
		Class:      classifyStatus(status, msg, code, typ),
		Status:     status,
		Message:    printable(msg, maxMessage),
		RetryAfter: parseRetryAfter(r.retryAfter, time.Now()),
		Err:        err,
	}
}

// sdkFailure classifies a failure that is not an SDK's API error, as
// classify does, with two things an SDK hides: an error status whose body
// held no error it knows (the body is shown), and a 2xx body read whole
// that still did not decode (not the protocol).
func sdkFailure(ctx context.Context, err error, rec *headerRecorder) *Error {
	e := classify(ctx, err, rec)
	if ctx.Err() != nil {
		return e
	}
	r := rec.last()
	switch {
	case r.status >= 400:
		e.Status = r.status
		e.Message = printable(bodyText(r, r.status), maxMessage)
		e.Class = classifyStatus(r.status, e.Message, "", "")
	case e.Class == turnapi.ClassNetwork && r.status/100 == 2 && r.body.EOF && r.body.Err == nil:
		e.Status, e.Class = r.status, turnapi.ClassInvalidResponse
		e.Message = invalidMessage(err.Error(), r)
	}
	return e
}

// splitQuery is a base URL without its query, and the query's parameters
// in order of their names (an SDK adds them to each request: Azure's
// ?api-version=, a proxy's key); a URL that does not parse is as it is.
// Pure.
func splitQuery(raw string) (string, [][2]string) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.RawQuery == "" {
		return raw, nil
	}
	q := u.Query()
	u.RawQuery, u.ForceQuery = "", false
	names := slices.Sorted(maps.Keys(q))
	var params [][2]string
	for _, k := range names {
		for _, v := range q[k] {
			params = append(params, [2]string{k, v})
		}
	}
	return u.String(), params
}
