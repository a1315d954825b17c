package llm

// This file classifies the failures of Anthropic Messages calls: the
// SDK's API errors (an error status, or an error event in a stream) and
// everything else as classify does.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// classifyAnthropic turns an anthropic-sdk-go error into an *Error: an API
// error by its status, type and message (an error event of a stream,
// which comes with the stream's 2xx status, by the status its type
// stands for); anything else as classify does, with the body shown when
// an error status came without an Anthropic error body, and a complete
// 2xx body that the SDK could not decode counted as not the protocol.
func classifyAnthropic(ctx context.Context, err error, rec *headerRecorder) *Error {
	r := rec.last()
	var apiErr *anthropic.Error
	if ctx.Err() == nil && errors.As(err, &apiErr) {
		status, typ := apiErr.StatusCode, string(apiErr.Type())
		msg := strings.TrimSpace(apiErr.Message)
		if msg == "" && status >= 400 {
			msg = bodyText(r, status)
		}
		if msg == "" {
			msg = "the stream reported an error"
		}
		if status < 400 {
			status = anthropicErrorStatus(typ)
		}
		return &Error{
			Class:      classifyStatus(status, msg, "", typ),
			Status:     status,
			Message:    printable(msg, maxMessage),
			RetryAfter: parseRetryAfter(r.retryAfter, time.Now()),
			Err:        err,
		}
	}
	e := classify(ctx, err, rec)
	if ctx.Err() != nil {
		return e
	}
	switch {
	case r.status >= 400:
		// The SDK read the body and found no Anthropic error in it.
		e.Status = r.status
		e.Message = printable(bodyText(r, r.status), maxMessage)
		e.Class = classifyStatus(r.status, e.Message, "", "")
	case e.Class == turnapi.ClassNetwork && r.status/100 == 2 && r.body.EOF && r.body.Err == nil:
		// The whole body was read and still did not decode.
		e.Status, e.Class = r.status, turnapi.ClassInvalidResponse
		e.Message = invalidMessage(err.Error(), r)
	}
	return e
}

// anthropicErrorStatus is the HTTP status an Anthropic error type stands
// for, for an error that came without one (an error event). Pure.
func anthropicErrorStatus(typ string) int {
	switch typ {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "billing_error":
		return http.StatusPaymentRequired
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "timeout_error":
		return http.StatusGatewayTimeout
	case "overloaded_error":
		return 529
	}
	return http.StatusInternalServerError
}
