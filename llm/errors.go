package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Class says what kind of failure a model call had.
type Class string

// Classes of model-call failures.
const (
	ClassRateLimit       Class = "rate_limit"
	ClassOverloaded      Class = "overloaded"
	ClassServer          Class = "server_error"
	ClassTimeout         Class = "timeout"
	ClassNetwork         Class = "network"
	ClassAuth            Class = "auth"
	ClassBilling         Class = "billing"
	ClassContextOverflow Class = "context_overflow"
	ClassModelNotFound   Class = "model_not_found"
	ClassBadRequest      Class = "bad_request"
	ClassCancelled       Class = "cancelled"
)

// Retryable reports whether the same request may succeed if simply sent again.
func (c Class) Retryable() bool {
	switch c {
	case ClassRateLimit, ClassOverloaded, ClassServer, ClassTimeout, ClassNetwork:
		return true
	}
	return false
}

// Error is a classified model-call failure.
type Error struct {
	Class      Class
	Status     int
	Message    string
	RetryAfter time.Duration
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

// classify turns a go-openai error into an *Error.
func classify(ctx context.Context, err error, rec *headerRecorder) *Error {
	status, retryAfter := rec.last()
	e := &Error{Err: err, Message: err.Error(), RetryAfter: parseRetryAfter(retryAfter, time.Now())}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
		e.Class = ClassCancelled
		return e
	case ctx.Err() != nil:
		e.Class = ClassTimeout
		return e
	case errors.As(err, &apiErr):
		e.Status = apiErr.HTTPStatusCode
		e.Message = apiErr.Message
		e.Class = classifyStatus(apiErr.HTTPStatusCode, apiErr.Message, fmt.Sprint(apiErr.Code), apiErr.Type)
		return e
	case errors.As(err, &reqErr):
		e.Status = reqErr.HTTPStatusCode
		if len(reqErr.Body) > 0 {
			e.Message = strings.TrimSpace(string(reqErr.Body))
		}
		e.Class = classifyStatus(reqErr.HTTPStatusCode, e.Message, "", "")
		return e
	}
	if status >= 400 {
		e.Status = status
		e.Class = classifyStatus(status, e.Message, "", "")
		return e
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		e.Class = ClassTimeout
		return e
	}
	e.Class = ClassNetwork
	return e
}

// classifyStatus maps an HTTP status and error text to a Class.
func classifyStatus(status int, message, code, typ string) Class {
	text := strings.ToLower(message + " " + code + " " + typ)
	switch {
	case status == http.StatusRequestEntityTooLarge,
		strings.Contains(text, "context_length_exceeded"),
		strings.Contains(text, "context length"),
		strings.Contains(text, "maximum context"),
		strings.Contains(text, "too many tokens"):
		return ClassContextOverflow
	case status == http.StatusPaymentRequired,
		strings.Contains(text, "insufficient_quota"),
		strings.Contains(text, "billing"),
		strings.Contains(text, "credit"):
		return ClassBilling
	case status == http.StatusTooManyRequests:
		return ClassRateLimit
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return ClassAuth
	case status == http.StatusNotFound,
		strings.Contains(text, "model_not_found"):
		return ClassModelNotFound
	case status == 529, status == http.StatusServiceUnavailable,
		strings.Contains(text, "overloaded"):
		return ClassOverloaded
	case status == http.StatusRequestTimeout, status == http.StatusGatewayTimeout:
		return ClassTimeout
	case status >= 500:
		return ClassServer
	case status >= 400:
		return ClassBadRequest
	}
	return ClassServer
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
