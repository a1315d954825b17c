package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/textline"
)

// Error types of the JSON error shape, as OpenAI names them where it has a
// name for the case.
const (
	typeInvalidRequest = "invalid_request_error"
	typeAuthentication = "authentication_error"
	typeNotFound       = "not_found_error"
	typeConflict       = "conflict_error"
	typeServer         = "server_error"
	typeTurn           = "turn_error"
)

// apiError is an error answered in the JSON error shape.
type apiError struct {
	status  int
	Message string `json:"message"`
	Type    string `json:"type"`
	// Param names the request's field at fault, as OpenAI's errors do
	// ("messages[0].content[1].type", a header's name).
	Param string `json:"param,omitempty"`
	Code  string `json:"code,omitempty"`
}

func (e *apiError) Error() string { return e.Message }

// errorf makes an apiError.
func errorf(status int, typ, code, format string, args ...any) *apiError {
	return &apiError{status: status, Type: typ, Code: code, Message: fmt.Sprintf(format, args...)}
}

// badRequest is a 400 invalid_request_error.
func badRequest(code, format string, args ...any) *apiError {
	return errorf(http.StatusBadRequest, typeInvalidRequest, code, format, args...)
}

// badParam is a 400 invalid_request_error about the field param; the
// message names it too.
func badParam(param, code, format string, args ...any) *apiError {
	e := badRequest(code, format, args...)
	e.Param = param
	return e
}

// notFound is a 404 not_found_error.
func notFound(format string, args ...any) *apiError {
	return errorf(http.StatusNotFound, typeNotFound, "not_found", format, args...)
}

// errorBody is the JSON error shape.
type errorBody struct {
	Error *apiError `json:"error"`
}

// writeError answers err in the JSON error shape: an *apiError as it says,
// anything else as a 500 whose message says only that the server failed
// (the cause is logged, never sent: it may name files or hosts).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *apiError
	var refused *engine.RefusedError
	switch {
	case errors.As(err, &e):
	case errors.As(err, &refused) && errors.Is(refused.Kind, engine.ErrMessageTooLarge):
		e = errorf(http.StatusRequestEntityTooLarge, typeInvalidRequest, "message_too_large", "%s", oneLine(refused.Why))
	case errors.As(err, &refused):
		e = errorf(http.StatusTooManyRequests, typeInvalidRequest, "queue_full", "%s", oneLine(refused.Why))
	default:
		s.logger.Error("api: request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		e = errorf(http.StatusInternalServerError, typeServer, "internal_error", "the server failed to answer this request; see its log")
	}
	writeJSON(w, e.status, errorBody{Error: e})
}

// writeJSON answers v as JSON with status; it returns nil, so that a
// handler can end with it (a failed write is the client's going away).
func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return nil
}

// decodeJSON reads the request body into v: one JSON object, no unknown
// trailing data, at most the server's body limit (413 beyond).
func decodeJSON(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return errorf(http.StatusUnsupportedMediaType, typeInvalidRequest, "unsupported_media_type",
			"the body must be JSON (Content-Type: application/json), not %q", ct)
	}
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			return errorf(http.StatusRequestEntityTooLarge, typeInvalidRequest, "request_too_large",
				"the request body is larger than %d bytes", tooLarge.Limit)
		case errors.Is(err, io.EOF):
			return badRequest("invalid_json", "the request body is empty: send a JSON object")
		}
		return badRequest("invalid_json", "the request body is not valid JSON: %s", oneLine(err.Error()))
	}
	if dec.More() {
		return badRequest("invalid_json", "the request body holds more than one JSON value")
	}
	return nil
}

// oneLine is s on one line, at most 200 characters: what an error
// message quotes of a client's input.
func oneLine(s string) string { return textline.Of(s, 200) }

// logRecover answers 500 for a handler that panicked, and logs it.
func (s *Server) logRecover(w http.ResponseWriter, r *http.Request) {
	if v := recover(); v != nil {
		if v == http.ErrAbortHandler {
			panic(v)
		}
		s.logger.Error("api: handler panicked", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v))
		s.writeError(w, r, errors.New("panic"))
	}
}
