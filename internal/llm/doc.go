// Package llm calls OpenAI-compatible chat completion endpoints with go-openai.
//
// One Call is one HTTP request: the client never retries by itself, because
// retries belong to Temporal (the model-call activity). Errors are classified
// into a Class so the caller can decide to retry, fall back or stop, and the
// provider's Retry-After header is surfaced.
//
// What a provider sends is not trusted: a stream that ends or breaks before
// a finish reason or "[DONE]" is a cut-off reply (ClassTruncatedReply), a
// body that is not the protocol (an HTML page, malformed JSON, an SSE
// stream of something else) is ClassInvalidResponse, shown with its first
// bytes; every provider text in an error is clipped to one printable line.
// Options.IdleTimeout bounds the time without progress, not the call: a
// stream lives as long as chunks keep coming.
//
// When the call's context carries a span (traces on), the HTTP request is
// a client span inside it (endpoint redacted, no headers, bodies or error
// text); nothing about the trace is sent to the provider. Without one, the
// transport is left as it is.
package llm
