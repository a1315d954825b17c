// Package llm calls model endpoints in their own wire formats: OpenAI chat
// completions (go-openai), Anthropic Messages (anthropic-sdk-go), the
// OpenAI Responses API (openai-go) and Ollama's native chat API (net/http:
// its OpenAI-compatible endpoint ignores a per-request num_ctx). Each is a
// Provider that takes the same Request (chat-completions-shaped messages,
// tools, a token cap, and the replay state earlier replies asked to get
// back) and returns the same normalised Reply (text, reasoning, tool calls,
// a finish reason in chat-completions words, usage with prompt-cache
// tokens), so the loop, its recovery ladder and its tests do not depend on
// the provider.
//
// One Call is one HTTP request: the client never retries by itself, because
// retries belong to Temporal (the model-call activity). Errors are classified
// into a Class so the caller can decide to retry, fall back or stop, and the
// provider's Retry-After header is surfaced.
//
// What a provider sends is not trusted: a stream that ends or breaks before
// a finish reason, "[DONE]" or Ollama's done line is a cut-off reply
// (ClassTruncatedReply), a body that is not the protocol (an HTML page,
// malformed JSON, an SSE stream of something else) is
// ClassInvalidResponse, shown with its first bytes; every provider text in
// an error is clipped to one printable line.
// Options.IdleTimeout bounds the time without progress, not the call: a
// stream lives as long as chunks keep coming.
//
// When the call's context carries a span (traces on), the HTTP request is
// a client span inside it (endpoint redacted, no headers, bodies or error
// text); nothing about the trace is sent to the provider. Without one, the
// transport is left as it is.
package llm
