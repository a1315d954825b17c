package fakellm

import (
	"encoding/json"
	"net/http"

	openai "github.com/sashabaranov/go-openai"
)

// The types below are the JSON shapes the server writes. They follow the
// OpenAI API rather than reuse go-openai's structs so that nulls and omitted
// fields look exactly as a real server sends them.

type wireFunction struct {
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireMessage struct {
	Role             string         `json:"role"`
	Content          *string        `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	Refusal          *string        `json:"refusal"`
}

type wireChoice struct {
	Index        int         `json:"index"`
	Message      wireMessage `json:"message"`
	Logprobs     *struct{}   `json:"logprobs"`
	FinishReason string      `json:"finish_reason"`
}

type wireCompletion struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	Choices           []wireChoice  `json:"choices"`
	Usage             *openai.Usage `json:"usage"`
	SystemFingerprint *string       `json:"system_fingerprint"`
}

type wireDelta struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type wireChunkChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// wireChunk is one chat.completion.chunk. Usage is written (as null) only
// when the request asked for usage, as real servers do.
type wireChunk struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	Created           int64             `json:"created"`
	Model             string            `json:"model"`
	SystemFingerprint *string           `json:"system_fingerprint"`
	Choices           []wireChunkChoice `json:"choices"`
	Usage             json.RawMessage   `json:"usage,omitempty"`
}

type wireModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

type wireError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

type wireErrorBody struct {
	Error wireError `json:"error"`
}

// apiError describes an error answer.
type apiError struct {
	status     int
	message    string
	typ        string
	code       string
	retryAfter string
}

// stepError builds the error answer of an error step, applying defaults.
func stepError(st Step) apiError {
	e := apiError{
		status:     st.Status,
		message:    st.ErrorMessage,
		typ:        st.ErrorType,
		code:       st.ErrorCode,
		retryAfter: st.RetryAfter,
	}
	if e.message == "" {
		e.message = "fakellm: scripted error: " + http.StatusText(e.status)
	}
	if e.code == "" {
		switch e.status {
		case http.StatusTooManyRequests:
			e.code = "rate_limit_exceeded"
		case http.StatusUnauthorized:
			e.code = "invalid_api_key"
		}
	}
	return e
}

// defaultErrorType returns the error type OpenAI uses for a status.
func defaultErrorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "requests"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

// writeAPIError writes an OpenAI error answer.
func writeAPIError(w http.ResponseWriter, e apiError) {
	if e.typ == "" {
		e.typ = defaultErrorType(e.status)
	}
	body := wireErrorBody{Error: wireError{Message: e.message, Type: e.typ}}
	if e.code != "" {
		code := e.code
		body.Error.Code = &code
	}
	if e.retryAfter != "" {
		w.Header().Set("Retry-After", e.retryAfter)
	}
	writeJSON(w, e.status, body)
}

// writeJSON writes v as a JSON answer with the status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "fakellm: encoding answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
