package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Clip lengths of text from the provider shown in errors: an error body
// can be megabytes, and the message ends up in workflow history.
const (
	maxMessage = 500
	maxHead    = 200
)

// Error is a classified model-call failure.
type Error struct {
	Class      turnapi.ErrorClass
	Status     int
	Message    string
	RetryAfter time.Duration
	// Param is the request parameter an error answer names, when it
	// names one (the OpenAI error body's param).
	Param string
	// Streamed is text received before a stream broke.
	Streamed string
	Err      error
}

func (e *Error) Error() string {
	if e.Status > 0 {
		return fmt.Sprintf("model call failed (%s, HTTP %d): %s", e.Class, e.Status, e.Message)
	}
	return fmt.Sprintf("model call failed (%s): %s", e.Class, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// classify turns a go-openai error into an *Error. ctx is the call's
// context (an idle timeout cancels it with errIdle as the cause); rec knows
// the response, if there was one.
func classify(ctx context.Context, err error, rec *headerRecorder) *Error {
	r := rec.last()
	e := &Error{Err: err, Message: printable(errorText(err), maxMessage), RetryAfter: parseRetryAfter(r.retryAfter, time.Now())}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	var idle *idleError
	switch {
	case errors.As(context.Cause(ctx), &idle):
		e.Class, e.Message = turnapi.ClassTimeout, idle.Error()
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
		e.Class = turnapi.ClassCancelled
	case ctx.Err() != nil:
		e.Class = turnapi.ClassTimeout
	case errors.As(err, &apiErr):
		e.Status = apiErr.HTTPStatusCode
		e.Message = printable(apiErr.Message, maxMessage)
		e.Class = classifyStatus(apiErr.HTTPStatusCode, apiErr.Message, fmt.Sprint(apiErr.Code), apiErr.Type)
	case errors.As(err, &reqErr):
		e.Status = reqErr.HTTPStatusCode
		if len(reqErr.Body) > 0 {
			e.Message = printable(string(reqErr.Body), maxMessage)
		}
		e.Class = classifyStatus(reqErr.HTTPStatusCode, e.Message, "", "")
	case r.status >= 400:
		e.Status = r.status
		e.Class = classifyStatus(r.status, e.Message, "", "")
	case notProtocol(err, r.body):
		e.Status = r.status
		e.Class = turnapi.ClassInvalidResponse
		e.Message = invalidMessage(err.Error(), r)
	default:
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			e.Class = turnapi.ClassTimeout
		} else {
			e.Class = turnapi.ClassNetwork
		}
	}
	return e
}

// errorText is err's text with the URL of a failed request redacted (a
// base URL may hold a key in its user info or query), the text that
// reaches errors, logs and workflow history. Pure.
func errorText(err error) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Op + " " + RedactURL(urlErr.URL) + ": " + urlErr.Err.Error()
	}
	return err.Error()
}

// notProtocol reports whether err says the body read was not the protocol,
// as opposed to a body cut short by the network. Pure.
func notProtocol(err error, body bodyState) bool {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, errNotProtocol), errors.Is(err, openai.ErrTooManyEmptyStreamMessages):
		return true
	case body.Err != nil:
		return false // the connection broke: the body is incomplete, not wrong
	case errors.As(err, &syntax), errors.As(err, &typ):
		return true
	case errors.Is(err, io.ErrUnexpectedEOF):
		return body.EOF // the whole body was read and still did not parse
	}
	return false
}

// invalidMessage describes a body that is not the protocol: why, its
// content type and its first bytes, clipped and printable. Pure.
func invalidMessage(why string, r response) string {
	msg := "the answer is not the provider's protocol: " + printable(why, maxHead)
	if r.contentType != "" && !strings.Contains(why, r.contentType) {
		msg += " (content type " + printable(r.contentType, 80) + ")"
	}
	if head := strings.TrimSpace(string(r.body.Head)); head != "" {
		return msg + "; it begins: " + printable(head, maxHead)
	}
	return msg + "; the body was empty"
}

// classifyStatus maps an HTTP status and error text to a Class.
func classifyStatus(status int, message, code, typ string) turnapi.ErrorClass {
	text := strings.ToLower(message + " " + code + " " + typ)
	switch {
	case status == http.StatusRequestEntityTooLarge,
		strings.Contains(text, "context_length_exceeded"),
		strings.Contains(text, "context length"),
		strings.Contains(text, "maximum context"),
		strings.Contains(text, "too many tokens"),
		strings.Contains(text, "prompt is too long"),
		strings.Contains(text, "exceed context limit"):
		return turnapi.ClassContextOverflow
	case status == http.StatusPaymentRequired,
		strings.Contains(text, "insufficient_quota"),
		strings.Contains(text, "billing"),
		strings.Contains(text, "credit"):
		return turnapi.ClassBilling
	case status == http.StatusTooManyRequests:
		return turnapi.ClassRateLimit
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return turnapi.ClassAuth
	case status == http.StatusNotFound,
		strings.Contains(text, "model_not_found"):
		return turnapi.ClassModelNotFound
	case status == 529, status == http.StatusServiceUnavailable,
		strings.Contains(text, "overloaded"):
		return turnapi.ClassOverloaded
	case status == http.StatusRequestTimeout, status == http.StatusGatewayTimeout:
		return turnapi.ClassTimeout
	case status >= 500:
		return turnapi.ClassServer
	case status >= 400:
		return turnapi.ClassBadRequest
	}
	return turnapi.ClassServer
}

// parseRetryAfter reads delay-seconds or an HTTP date; 0 when absent or bad.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
