package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Wire is a provider's wire format.
type Wire string

// The wire formats Talaria speaks.
const (
	// WireOpenAI is OpenAI chat completions (OpenAI, OpenRouter, vLLM,
	// llama.cpp and most OpenAI-compatible servers).
	WireOpenAI Wire = "openai"
	// WireAnthropic is Anthropic's Messages API.
	WireAnthropic Wire = "anthropic"
	// WireResponses is OpenAI's Responses API.
	WireResponses Wire = "responses"
	// WireOllama is Ollama's native chat API (POST /api/chat), which,
	// unlike Ollama's OpenAI-compatible endpoint, honours a per-request
	// context size (options.num_ctx).
	WireOllama Wire = "ollama"
)

// Wires lists the wire formats, in the order they are documented.
var Wires = []Wire{WireOpenAI, WireAnthropic, WireResponses, WireOllama}

// Caching layouts of Anthropic prompt caching.
const (
	// CacheSystemAnd3 marks the system prompt and the last three messages
	// as cache breakpoints (the default).
	CacheSystemAnd3 = "system_and_3"
	// CacheNone sends no cache breakpoints.
	CacheNone = "none"
)

// Endpoint is one model endpoint: its wire format, where it is, the key
// and the model name, and what its wire format lets one tune.
type Endpoint struct {
	Wire    Wire
	BaseURL string
	// APIKey is the key a call sends; Keys is the endpoint's whole pool,
	// in order (APIKey is one of them).
	APIKey string
	Keys   []string
	Model  string
	// Caching is the Anthropic cache layout (CacheSystemAnd3 when empty).
	Caching string
	// ThinkingBudget, when positive, turns on Anthropic extended thinking
	// with this many budget tokens.
	ThinkingBudget int
	// ReasoningEffort is the Responses API's reasoning effort (low,
	// medium, high; empty: the model's default).
	ReasoningEffort string
	// ExtraBody holds fields added to every request body as they are,
	// e.g. Ollama's {"options": {"num_ctx": 32768}}.
	ExtraBody map[string]any
}

// Provider sends one request to one endpoint in its wire format and
// returns the normalised reply. The returned error, when not nil, is an
// *Error.
type Provider interface {
	Call(ctx context.Context, req Request, opts Options) (Reply, error)
}

// For is the Provider speaking e's wire format.
func For(e Endpoint) (Provider, error) {
	switch e.Wire {
	case "", WireOpenAI:
		return chatProvider{e: e}, nil
	case WireAnthropic:
		return anthropicProvider{e: e}, nil
	case WireResponses:
		return responsesProvider{e: e}, nil
	case WireOllama:
		return ollamaProvider{e: e}, nil
	}
	return nil, fmt.Errorf("unknown model provider %q", e.Wire)
}

// Call sends req to e once, in e's wire format.
func Call(ctx context.Context, e Endpoint, req Request, opts Options) (Reply, error) {
	p, err := For(e)
	if err != nil {
		return Reply{}, &Error{Class: turnapi.ClassBadRequest, Message: err.Error(), Err: err}
	}
	return p.Call(ctx, req, opts)
}

// Request is one model request, in chat-completions form whatever the wire
// format: the system prompt first, then the conversation; each provider
// converts it.
type Request struct {
	Messages  []openai.ChatCompletionMessage
	Tools     []openai.Tool
	MaxTokens int
	// Replay is what earlier replies of this conversation asked to be sent
	// back (thinking blocks, reasoning items), by ReplayKey of the
	// assistant message they came with. A provider uses the state its own
	// wire format wrote and ignores the rest.
	Replay map[string]Replay
}

// Replay is provider state that goes back to the provider with the reply
// it came with: Anthropic's signed thinking blocks, the Responses API's
// reasoning items.
type Replay struct {
	Wire Wire            `json:"wire"`
	Data json.RawMessage `json:"data"`
}

// ReplayKey is the key of an assistant message's replay state: its first
// tool call's id, "" for a message without calls (whose state is not
// needed again: providers drop the reasoning of finished answers). Pure.
func ReplayKey(m openai.ChatCompletionMessage) string {
	if len(m.ToolCalls) == 0 {
		return ""
	}
	return m.ToolCalls[0].ID
}

// Usage is a call's token usage, normalised: PromptTokens counts every
// input token, CacheReadTokens and CacheWriteTokens those of them read
// from and written to a prompt cache.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
}

// Reply is a model's complete answer to one request. FinishReason uses
// the chat-completions words: stop, length, tool_calls, content_filter.
type Reply struct {
	Content      string
	Reasoning    string
	ToolCalls    []openai.ToolCall
	FinishReason string
	Usage        Usage
	// Replay is state to store with the reply and send back with it.
	Replay *Replay
	// Streamed is the text received before a stream broke (set with an error).
	Streamed string
}

// Options tune one call.
type Options struct {
	// Stream streams the reply (SSE; NDJSON for Ollama); OnDelta receives
	// each content delta.
	Stream  bool
	OnDelta func(content string)
	// OnChunk is called for every chunk of a stream, text or not: the
	// model is making progress.
	OnChunk func()
	// IdleTimeout, when positive, ends the call with ClassTimeout once this
	// long passes without progress: without the answer of a plain call,
	// without a chunk of a stream. A stream stays alive while chunks arrive.
	IdleTimeout time.Duration
	// Transport overrides the HTTP transport (nil: http.DefaultTransport).
	Transport http.RoundTripper
}
