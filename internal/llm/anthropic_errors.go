package llm

// This file classifies the failures of Anthropic Messages calls: the
// SDK's API errors (an error status, or an error event in a stream) and
// everything else as classify does.

import (
	"context"
	"errors"
	"net/http"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
)

// classifyAnthropic turns an anthropic-sdk-go error into an *Error: an API
// error by its status, type and message (an error event of a stream,
// which comes with the stream's 2xx status, by the status its type
// stands for); anything else as classify does, with the body shown when
// an error status came without an Anthropic error body, and a complete
// 2xx body that the SDK could not decode counted as not the protocol.
func classifyAnthropic(ctx context.Context, err error, rec *headerRecorder) *Error {
	var apiErr *anthropic.Error
	if ctx.Err() != nil || !errors.As(err, &apiErr) {
		return sdkFailure(ctx, err, rec)
	}
	status, typ, msg := apiErr.StatusCode, string(apiErr.Type()), strings.TrimSpace(apiErr.Message)
	if msg == "" && status < 400 {
		msg = "the stream reported an error"
	}
	if status < 400 {
		status = anthropicErrorStatus(typ)
	}
	return apiFailure(rec, status, msg, "", typ, err)
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
