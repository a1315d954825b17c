package fakellm

import (
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// ToolCall is one function call the fake model asks for.
type ToolCall struct {
	// ID is the tool call id; when empty the server generates "call_<n>",
	// unique for the server's lifetime.
	ID string
	// Name is the function name.
	Name string
	// Arguments is the JSON argument text; when empty "{}" is sent, as real
	// models do for functions without parameters.
	Arguments string
}

// Step scripts the answer to one chat completion request.
//
// The zero Step answers with an empty assistant message and finish reason
// "stop".
type Step struct {
	// Text is the assistant message content.
	Text string
	// Reasoning is sent as "reasoning_content" (go-openai's
	// ChatCompletionMessage.ReasoningContent and the stream delta's
	// ReasoningContent); in streams it precedes the content.
	Reasoning string
	// ToolCalls are the function calls the model makes.
	ToolCalls []ToolCall
	// FinishReason defaults to "tool_calls" when ToolCalls is not empty and
	// to "stop" otherwise.
	FinishReason string
	// Usage overrides the reported token usage. By default prompt tokens are
	// estimated from the request size and completion tokens from the output
	// size (about four bytes a token). A zero TotalTokens is filled in.
	Usage *openai.Usage

	// Delay is waited before the response headers are sent.
	Delay time.Duration
	// ChunkDelay is the pause between two stream chunks.
	ChunkDelay time.Duration
	// ChunkSize, when positive, splits content, reasoning and argument text
	// into pieces of at most this many characters (runes). By default
	// content and reasoning are split at word boundaries and the arguments
	// of each tool call into three pieces.
	ChunkSize int
	// Hang makes the server never answer: the handler returns when the
	// client cancels the request or the server is closed.
	Hang bool

	// Status, when it is not 0 and not 2xx, makes the server answer with
	// this HTTP status and an OpenAI error body. It must be in 200..599.
	Status int
	// ErrorMessage is the error body's message; a default describing the
	// status is used when empty.
	ErrorMessage string
	// ErrorType is the error body's type; a default matching the status is
	// used when empty (e.g. "requests" for 429, "server_error" for 5xx).
	ErrorType string
	// ErrorCode is the error body's code; null when empty, except for a few
	// statuses with a well-known code (429 "rate_limit_exceeded", 401
	// "invalid_api_key").
	ErrorCode string
	// RetryAfter is the value of the Retry-After header, e.g. "2". It is
	// sent with error statuses only.
	RetryAfter string

	// Body, when not empty, is sent as the whole answer instead of the
	// protocol, with status Status (default 200) and ContentType: an HTML
	// error page, malformed JSON, an SSE stream of garbage. Delay and Hang
	// still apply; the other fields are ignored.
	Body string
	// ContentType is the Content-Type of Body (default "text/html;
	// charset=utf-8").
	ContentType string

	// BreakAfterChunks, when positive, drops the connection without
	// finishing the response: in a stream after this many content chunks
	// (chunks carrying reasoning, content or tool call pieces; the leading
	// role chunk does not count), which the client sees as a broken stream.
	// If the stream has fewer content chunks it breaks before the finish
	// chunk. In a JSON answer the body is cut off midway.
	BreakAfterChunks int
	// EndAfterChunks, when positive, ends the answer cleanly but early: a
	// stream after this many content chunks (or before the finish chunk if
	// there are fewer), with no finish chunk, usage or [DONE]; a JSON
	// answer after half its body, with a Content-Length that matches, so
	// the client reads a complete body of malformed JSON.
	EndAfterChunks int
	// StallAfterChunks, when positive, stops a stream after this many
	// content chunks (or before the finish chunk if there are fewer)
	// without finishing or closing it: the handler waits until the client
	// gives up or the server is closed. It simulates a stream that goes
	// silent. It has no effect on JSON answers.
	StallAfterChunks int
}

// TextStep answers with the assistant text and finish reason "stop".
func TextStep(text string) Step {
	return Step{Text: text}
}

// ToolStep answers with the given tool calls and finish reason "tool_calls".
func ToolStep(calls ...ToolCall) Step {
	return Step{ToolCalls: calls}
}

// ErrorStep answers with the HTTP status and an OpenAI error body carrying
// message.
func ErrorStep(status int, message string) Step {
	return Step{Status: status, ErrorMessage: message}
}

// HTMLStep answers with HTTP 200 and an HTML page, as a proxy or a captive
// portal in front of a provider does.
func HTMLStep(title string) Step {
	return Step{Body: "<!DOCTYPE html>\n<html><head><title>" + title + "</title></head>\n<body><h1>" +
		title + "</h1><p>Please try again later.</p></body></html>\n"}
}

// isError reports whether the step answers with an error status.
func (st Step) isError() bool {
	return st.Status != 0 && (st.Status < 200 || st.Status > 299)
}

// finishReason returns the finish reason with its default applied.
func (st Step) finishReason() string {
	switch {
	case st.FinishReason != "":
		return st.FinishReason
	case len(st.ToolCalls) > 0:
		return string(openai.FinishReasonToolCalls)
	default:
		return string(openai.FinishReasonStop)
	}
}
