// Package modelinfo knows models: their context window, their output cap
// and their price per million tokens (input, output, cache read, cache
// write). A bundled table covers common models; configuration overrides
// it model by model, and endpoints that tell (an OpenAI-compatible
// /v1/models, Ollama's /api/show) fill in what the table does not know.
// Cost turns a call's normalised usage into US dollars.
package modelinfo
