package llm

// This file classifies the failures of Responses API calls: the SDK's
// API errors, bodies that are not the protocol, and the failures a
// response or a stream reports in its body.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3/responses"
)

// classifyResponses turns an openai-go error into an *Error: an API error
// by its status, code and type, as classify does for go-openai; anything
// else as classify does, with the body shown when an error status came
// without an OpenAI error body, and a complete 2xx body that the SDK
// could not decode counted as not the protocol.
func classifyResponses(ctx context.Context, err error, rec *headerRecorder) *Error {
	var apiErr *responses.Error
	if ctx.Err() != nil || !errors.As(err, &apiErr) {
		return sdkFailure(ctx, err, rec)
	}
	e := apiFailure(rec, apiErr.StatusCode, apiErr.Message, apiErr.Code, apiErr.Type, err)
	e.Param = apiErr.Param
	return e
}

// bodyText is what to say about an error answer without an error
// message: its first bytes, or its status. Pure.
func bodyText(r response, status int) string {
	if head := strings.TrimSpace(string(r.body.Head)); head != "" {
		return head
	}
	if text := http.StatusText(status); text != "" {
		return text
	}
	return "the error answer was empty"
}

// failedResponse is the error of a response that failed after it began
// (response.failed, an error event, a failed response object), classified
// by its code as the HTTP error of that code would be. Pure.
func failedResponse(code, message string) *Error {
	message = cmp.Or(strings.TrimSpace(message), "no reason given")
	if code != "" {
		message += " (" + code + ")"
	}
	return &Error{
		Class:   classifyStatus(failureStatus(code), message, code, ""),
		Message: "the response failed: " + printable(message, maxMessage),
	}
}

// failureStatus is the HTTP status an error code of a failed response
// stands for. Pure.
func failureStatus(code string) int {
	switch c := strings.ToLower(code); {
	case c == "rate_limit_exceeded":
		return http.StatusTooManyRequests
	case c == "invalid_api_key":
		return http.StatusUnauthorized
	case strings.Contains(c, "overloaded"), c == "slow_down":
		return http.StatusServiceUnavailable
	case strings.HasPrefix(c, "invalid_"), c == "context_length_exceeded":
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// streamErrorBody reads the code and message of a stream event that
// carries an "error" field (an object, or a bare message). Pure.
func streamErrorBody(data []byte) (code, message string) {
	var ev struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return "", printable(string(data), maxMessage)
	}
	var body struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
	}
	if json.Unmarshal(ev.Error, &body) == nil {
		code = strings.Trim(string(body.Code), `"`)
		if code == "null" || code == "" {
			code = body.Type
		}
		return code, body.Message
	}
	var text string
	if json.Unmarshal(ev.Error, &text) == nil {
		return "", text
	}
	return "", printable(string(ev.Error), maxMessage)
}
