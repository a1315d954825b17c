package fakellm

// This file is the Anthropic Messages format: how its requests are
// authorized, read and checked, and how its errors are written.

import (
	"crypto/rand"
	"fmt"
	"net/http"
)

// anthropicFormat is Anthropic Messages at POST /v1/messages. It keeps
// the server's prompt cache and the secret its thinking signatures are
// made with.
type anthropicFormat struct {
	cache  *promptCache
	signer signer
}

// anthropicNative is what decode hands on to the answer: the prefixes
// the request's cache breakpoints mark.
type anthropicNative struct {
	prefixes []cachePrefix
}

// newAnthropicFormat is the format of one server, with a fresh cache and
// a random signing secret.
func newAnthropicFormat() *anthropicFormat {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret) // crypto/rand.Read does not fail
	return &anthropicFormat{cache: &promptCache{prefixes: map[string]int{}}, signer: signer{secret: secret}}
}

func (*anthropicFormat) wire() Wire { return WireAnthropic }

// authorized accepts the key as the x-api-key header or, as the official
// SDK sends it, a bearer token.
func (*anthropicFormat) authorized(r *http.Request, key string) bool {
	return key == "" || r.Header.Get("X-Api-Key") == key || r.Header.Get("Authorization") == "Bearer "+key
}

// checkHeaders refuses a request without the anthropic-version header.
func (*anthropicFormat) checkHeaders(h http.Header) *apiError {
	if h.Get("Anthropic-Version") != "" {
		return nil
	}
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error",
		message: "anthropic-version: header is required"}
}

// decode reads and checks a request; a request the real API refuses is
// an error.
func (f *anthropicFormat) decode(raw []byte) (decoded, error) {
	p, err := parseAnthropic(raw)
	if err != nil {
		return decoded{}, err
	}
	if err := validateAnthropic(p, f.signer.verify); err != nil {
		return decoded{}, err
	}
	prefixes, err := cachePrefixes(p)
	if err != nil {
		return decoded{}, fmt.Errorf("reading the cache prefixes: %w", err)
	}
	return decoded{chat: p.chatRequest(), stream: p.req.Stream, includeUsage: true,
		native: &anthropicNative{prefixes: prefixes}}, nil
}

// antErrorBody is the error answer of the Messages API.
type antErrorBody struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// writeError writes an error in Anthropic's shape, its type from the
// status unless one was given (Step.ErrorType).
func (*anthropicFormat) writeError(w http.ResponseWriter, e apiError) {
	var body antErrorBody
	body.Type = "error"
	body.Error.Type = anthropicErrorType(e)
	body.Error.Message = e.message
	if e.retryAfter != "" {
		w.Header().Set("Retry-After", e.retryAfter)
	}
	writeJSON(w, e.status, body)
}

// anthropicErrorType is the error type of an error answer: the one it
// names, unless that is an OpenAI default (which the server's own errors
// carry), else the type the real API uses for its status. Pure.
func anthropicErrorType(e apiError) string {
	switch {
	case e.typ == "" || e.typ == "server_error" || e.typ == "requests":
	case e.typ == "invalid_request_error" && e.code == "invalid_api_key":
	default:
		return e.typ
	}
	switch e.status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusPaymentRequired:
		return "billing_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	if e.status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// body is the JSON message answering a plan.
func (f *anthropicFormat) body(p plan) (any, error) { return f.messageBody(p), nil }

// events is the streamed answer of a plan.
func (f *anthropicFormat) events(p plan) ([]sseEvent, error) { return f.streamEvents(p) }
