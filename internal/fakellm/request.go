package fakellm

import (
	"net/http"
	"net/url"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Request is the record of one chat completion request the server received.
type Request struct {
	// Index is the request's position in arrival order, starting at 0.
	Index int
	// Wire is the wire format the request came in (the endpoint it was
	// sent to).
	Wire Wire
	// Body is the decoded request in chat-completions form, whatever its
	// wire format: an Anthropic, Responses or Ollama request is read into the
	// messages, tools and limits it amounts to (zero when the body was not
	// a valid request).
	Body openai.ChatCompletionRequest
	// Raw is the request body as sent.
	Raw []byte
	// Query is the request URL's query.
	Query url.Values
	// Header holds the request headers.
	Header http.Header
	// Received is when the request arrived.
	Received time.Time

	// Status is the HTTP status the server answered (or was about to
	// answer) with. It is known once the request has been dispatched.
	Status int
	// Scripted reports that the answer came from the script (Push, New);
	// it is false when a Responder answered, when the script was exhausted
	// and when the request was rejected (bad JSON, wrong API key).
	Scripted bool
	// Exhausted reports that the script was exhausted and no Responder was
	// set, so the server answered HTTP 500.
	Exhausted bool
	// Cancelled reports that the client went away before the response was
	// finished.
	Cancelled bool
	// Broken reports that the server deliberately broke the response
	// (Step.BreakAfterChunks) or ended it early (Step.EndAfterChunks).
	Broken bool
	// Finished is when the handler finished with the request; zero while it
	// is still being served.
	Finished time.Time
}

// LastMessage returns the last message of the request, if any. Responders
// use it to react to tool results or user input.
func (r Request) LastMessage() (openai.ChatCompletionMessage, bool) {
	if len(r.Body.Messages) == 0 {
		return openai.ChatCompletionMessage{}, false
	}
	return r.Body.Messages[len(r.Body.Messages)-1], true
}

// clone returns a copy that shares no mutable state with r.
func (r Request) clone() Request {
	c := r
	c.Raw = append([]byte(nil), r.Raw...)
	c.Header = r.Header.Clone()
	if r.Query != nil {
		c.Query = url.Values{}
		for k, v := range r.Query {
			c.Query[k] = append([]string(nil), v...)
		}
	}
	return c
}
