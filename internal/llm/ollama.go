package llm

// This file holds the Ollama provider: Ollama's native chat API, POST
// /api/chat. Ollama's OpenAI-compatible endpoint (/v1/chat/completions)
// drops a per-request context size (options.num_ctx, or a top-level
// num_ctx), so a model served there runs with Ollama's 4096-token default
// whatever the configuration says; the native endpoint honours
// "options": {"num_ctx": N}. The provider speaks it over net/http: Ollama's
// own Go client lives in the module of the Ollama server, a dependency far
// too large for a dozen JSON fields.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// defaultOllamaURL is the root of an Ollama endpoint that names none.
const defaultOllamaURL = "http://localhost:11434"

// maxOllamaError bounds how much of an error answer is read.
const maxOllamaError = 1 << 20

// ollamaProvider speaks Ollama's native chat API.
type ollamaProvider struct{ e Endpoint }

// ollamaRequest is the body of POST /api/chat.
type ollamaRequest struct {
	Model    string          `json:"model"`
	Messages []ollamaMessage `json:"messages"`
	Tools    []ollamaTool    `json:"tools,omitempty"`
	Stream   bool            `json:"stream"`
	Options  map[string]any  `json:"options,omitempty"`
}

// ollamaTool is one function tool of a request.
type ollamaTool struct {
	Type     string         `json:"type"`
	Function ollamaFunction `json:"function"`
}

// ollamaFunction is a tool's definition.
type ollamaFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

// Call sends req once, as one JSON answer or (opts.Stream) a stream of
// NDJSON lines. A stream that ends, or whose connection breaks, after some
// lines but before its "done": true line is a cut-off reply
// (ClassTruncatedReply, the text received so far in Error.Streamed); a
// body that is not Ollama's answer is ClassInvalidResponse; an error
// answer ({"error": "..."}) is classified by its status and message. It
// never retries.
func (p ollamaProvider) Call(ctx context.Context, in Request, opts Options) (Reply, error) {
	ctx, idle := withIdleTimeout(ctx, opts.IdleTimeout)
	defer idle.stop()
	body, rest, err := ollamaBody(p.e, in, opts.Stream)
	if err != nil {
		return Reply{}, &Error{Class: turnapi.ClassBadRequest, Message: "building the request: " + err.Error(), Err: err}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return Reply{}, &Error{Class: turnapi.ClassBadRequest, Message: "encoding the request: " + err.Error(), Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ollamaChatURL(p.e.BaseURL), bytes.NewReader(data))
	if err != nil {
		return Reply{}, &Error{Class: turnapi.ClassBadRequest, Message: "building the request: " + printable(err.Error(), maxMessage), Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	if p.e.APIKey != "" {
		// Ollama itself wants no key; the proxies put in front of it do.
		req.Header.Set("Authorization", "Bearer "+p.e.APIKey)
	}
	rec := &headerRecorder{base: http.Client{Transport: withExtraBody(traced(ctx, opts.Transport), rest)}}
	resp, err := rec.Do(req)
	if err != nil {
		return Reply{}, classify(ctx, err, rec)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode/100 != 2 {
		return Reply{}, ollamaStatusError(ctx, resp, rec)
	}
	return readOllama(ctx, resp.Body, rec, idle, opts, digestOf(data))
}

// ollamaBody is the request for in at e, and what of e.ExtraBody is left
// to add to it as it is: its "options" go into the request's options,
// with num_predict (the reply's cap, when in sets one) on top. Pure.
func ollamaBody(e Endpoint, in Request, stream bool) (ollamaRequest, map[string]any, error) {
	tools, err := ollamaTools(in)
	if err != nil {
		return ollamaRequest{}, nil, err
	}
	options, rest, err := ollamaOptions(e.ExtraBody, in.MaxTokens)
	if err != nil {
		return ollamaRequest{}, nil, err
	}
	return ollamaRequest{
		Model:    e.Model,
		Messages: ollamaMessages(in),
		Tools:    tools,
		Stream:   stream,
		Options:  options,
	}, rest, nil
}

// ollamaOptions merges the options of an extra body (Ollama's num_ctx)
// with num_predict for maxTokens (when positive), and returns the extra
// body's other fields; nil options when there are none. Pure.
func ollamaOptions(extra map[string]any, maxTokens int) (map[string]any, map[string]any, error) {
	options := map[string]any{}
	var rest map[string]any
	for k, v := range extra {
		if k != "options" {
			if rest == nil {
				rest = map[string]any{}
			}
			rest[k] = v
			continue
		}
		given, err := objectOf(v)
		if err != nil {
			return nil, nil, fmt.Errorf("the extra body's options: %w", err)
		}
		for name, value := range given {
			options[name] = value
		}
	}
	if maxTokens > 0 {
		options["num_predict"] = maxTokens
	}
	if len(options) == 0 {
		options = nil
	}
	return options, rest, nil
}

// objectOf is v as a JSON object's fields (nil for nil). Pure.
func objectOf(v any) (map[string]any, error) {
	switch o := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return o, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding them: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("they are not a JSON object: %w", err)
	}
	return out, nil
}

// ollamaTools is a request's function tools in Ollama's shape; other
// tool types are skipped. Pure.
func ollamaTools(in Request) ([]ollamaTool, error) {
	return functionTools(in.Tools, func(fn *openai.FunctionDefinition, schema map[string]any) ollamaTool {
		return ollamaTool{Type: "function", Function: ollamaFunction{Name: fn.Name, Description: fn.Description, Parameters: schema}}
	})
}

// ollamaChatURL is the chat endpoint of a base URL given as Ollama's root
// (http://host:11434) or, as the OpenAI-compatible API is reached, with
// /v1 after it; the query, if any, is kept. Pure.
func ollamaChatURL(raw string) string {
	base := cmp.Or(strings.TrimSpace(raw), defaultOllamaURL)
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return strings.TrimSuffix(strings.TrimRight(base, "/"), "/v1") + "/api/chat"
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/v1") + "/api/chat"
	u.RawPath = ""
	return u.String()
}

// ollamaStatusError is the error of an answer with an error status: its
// {"error": "..."} message (or the body's first bytes), classified by the
// status and the message, with its Retry-After.
func ollamaStatusError(ctx context.Context, resp *http.Response, rec *headerRecorder) *Error {
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxOllamaError))
	if err != nil && ctx.Err() != nil {
		return classify(ctx, err, rec)
	}
	r := rec.last()
	msg := ollamaErrorText(data)
	if msg == "" {
		msg = bodyText(r, resp.StatusCode)
	}
	return &Error{
		Class:      ollamaClass(resp.StatusCode, msg),
		Status:     resp.StatusCode,
		Message:    printable(msg, maxMessage),
		RetryAfter: parseRetryAfter(r.retryAfter, time.Now()),
		Err:        fmt.Errorf("ollama answered HTTP %d", resp.StatusCode),
	}
}

// ollamaErrorText is the message of Ollama's error body {"error":
// "message"} (or of an OpenAI-style {"error": {"message": ...}} a proxy
// may send); "" when data is neither. Pure.
func ollamaErrorText(data []byte) string {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &body) != nil || len(body.Error) == 0 {
		return ""
	}
	var text string
	if json.Unmarshal(body.Error, &text) == nil {
		return strings.TrimSpace(text)
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body.Error, &obj) == nil {
		return strings.TrimSpace(obj.Message)
	}
	return ""
}

// ollamaClass classifies an Ollama error: as classifyStatus does, and a
// model Ollama does not have ("model 'x' not found, try pulling it
// first") as ClassModelNotFound whatever client error status it came
// with. Pure.
func ollamaClass(status int, message string) turnapi.ErrorClass {
	class := classifyStatus(status, message, "", "")
	text := strings.ToLower(message)
	if class == turnapi.ClassBadRequest && strings.Contains(text, "model") && strings.Contains(text, "not found") {
		return turnapi.ClassModelNotFound
	}
	return class
}

// ollamaFailure is the error of an {"error": "..."} line in a successful
// answer (a model that failed while it ran): classified as an HTTP error
// of status (500 when the answer's status is no error) with that message.
// Pure.
func ollamaFailure(status int, message string) *Error {
	if status < 400 {
		status = http.StatusInternalServerError
	}
	message = cmp.Or(strings.TrimSpace(message), "no reason given")
	return &Error{Class: ollamaClass(status, message), Message: "the model failed: " + printable(message, maxMessage),
		Err: errors.New("ollama reported an error in its answer")}
}
