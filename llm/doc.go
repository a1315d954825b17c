// Package llm calls OpenAI-compatible chat completion endpoints with go-openai.
//
// One Call is one HTTP request: the client never retries by itself, because
// retries belong to Temporal (the model-call activity). Errors are classified
// into a Class so the caller can decide to retry, fall back or stop, and the
// provider's Retry-After header is surfaced.
package llm
