package fakellm

import (
	"encoding/json"
	"net/http"

	openai "github.com/sashabaranov/go-openai"
)

// Wire names a wire format the server speaks.
type Wire string

// The wire formats, each at its own endpoint.
const (
	// WireOpenAI is chat completions: POST /v1/chat/completions.
	WireOpenAI Wire = "openai"
	// WireAnthropic is Anthropic Messages: POST /v1/messages.
	WireAnthropic Wire = "anthropic"
	// WireResponses is the OpenAI Responses API: POST /v1/responses.
	WireResponses Wire = "responses"
	// WireOllama is Ollama's native chat API: POST /api/chat.
	WireOllama Wire = "ollama"
)

// format is one wire format: how its requests are read and its answers
// and errors written. The script (Step) is the same for every format.
type format interface {
	wire() Wire
	// decode reads a request body; a request the real API would refuse
	// is an error, answered with HTTP 400.
	decode(raw []byte) (decoded, error)
	// authorized reports whether r carries key (empty: no check).
	authorized(r *http.Request, key string) bool
	writeError(w http.ResponseWriter, e apiError)
	// body is the JSON answer of a plan; events its streamed answer.
	body(p plan) (any, error)
	events(p plan) ([]sseEvent, error)
}

// headerChecker is a format that refuses some requests by their
// headers alone (Anthropic's missing anthropic-version).
type headerChecker interface {
	checkHeaders(h http.Header) *apiError
}

// headerError is the refusal of a request's headers by f, nil when f
// accepts them or does not check them.
func headerError(f format, h http.Header) *apiError {
	if c, ok := f.(headerChecker); ok {
		return c.checkHeaders(h)
	}
	return nil
}

// decoded is what a format read from a request.
type decoded struct {
	// chat is the request in chat-completions form (Request.Body).
	chat         openai.ChatCompletionRequest
	stream       bool
	includeUsage bool
	// native is the format's own reading, handed back in plan.native.
	native any
}

// newFormats is each endpoint's format, fresh for one server (a format
// may keep state, as a prompt cache).
func newFormats() map[string]format {
	return map[string]format{
		"/v1/chat/completions": chatFormat{},
		"/v1/messages":         newAnthropicFormat(),
		"/v1/responses":        newResponsesFormat(),
		"/api/chat":            ollamaFormat{},
	}
}

// chatFormat is OpenAI chat completions.
type chatFormat struct{}

func (chatFormat) wire() Wire { return WireOpenAI }

func (chatFormat) decode(raw []byte) (decoded, error) {
	var in chatRequest
	if err := json.Unmarshal(raw, &in); err != nil {
		return decoded{}, err
	}
	req := in.ChatCompletionRequest
	for _, t := range in.Tools {
		tool := openai.Tool{Type: t.Type}
		if f := t.Function; f != nil {
			tool.Function = &openai.FunctionDefinition{Name: f.Name, Description: f.Description, Strict: f.Strict}
			if len(f.Parameters) > 0 && string(f.Parameters) != "null" {
				tool.Function.Parameters = f.Parameters
			}
		}
		req.Tools = append(req.Tools, tool)
	}
	return decoded{chat: req, stream: req.Stream,
		includeUsage: req.Stream && req.StreamOptions != nil && req.StreamOptions.IncludeUsage}, nil
}

// chatRequest is a chat completions request as read: its tools' parameters
// stay raw JSON, as the other formats keep them (decoding every schema into
// maps was most of the time a request took to read).
type chatRequest struct {
	openai.ChatCompletionRequest
	Tools []chatTool `json:"tools,omitempty"`
}

// chatTool is one tool of a chatRequest.
type chatTool struct {
	Type     openai.ToolType `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Strict      bool            `json:"strict,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function,omitempty"`
}

func (chatFormat) authorized(r *http.Request, key string) bool {
	return key == "" || r.Header.Get("Authorization") == "Bearer "+key
}

func (chatFormat) writeError(w http.ResponseWriter, e apiError) { writeAPIError(w, e) }

func (chatFormat) body(p plan) (any, error) { return completionBody(p), nil }

func (chatFormat) events(p plan) ([]sseEvent, error) { return streamEvents(p) }
