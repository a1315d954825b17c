// Package modelinfo knows models: their context window, their output cap,
// their price per million tokens (input, output, cache read, cache
// write) and whether they take pictures (vision). A bundled table covers common models; configuration overrides
// it model by model, and endpoints that tell (an OpenAI-compatible
// /v1/models, llama.cpp's /props, Ollama's /api/show) fill in what the
// table does not know. Cost turns a call's normalised usage into US
// dollars.
//
// A Catalog answers part by part (window, output cap, price, vision) from the
// configuration's overrides, then what a Discoverer learnt from the
// endpoint (asked once per endpoint and model for the life of the
// process; a failure is "unknown", never an error), then the bundled
// table, and says where each part comes from (Source). For an Ollama
// endpoint it gives the request fields that send the window as num_ctx
// (ExtraBody).
package modelinfo
