// Package fakellm is a scripted, in-process fake of an OpenAI-compatible
// chat completions server. It is the only model fake in Talaria: unit tests,
// integration tests and benchmarks start one, point a go-openai client (or a
// separately built talaria binary, through OPENAI_BASE_URL) at Server.URL,
// and script what the "model" answers.
//
// The server speaks the real wire protocol as the go-openai client parses it:
//
//   - POST /v1/chat/completions answers with a JSON chat.completion object,
//     or, when the request has "stream": true, with Server-Sent Events
//     ("data: {chunk}\n\n" lines ending with "data: [DONE]\n\n"). Tool calls
//     stream the way real models stream them: the first delta of each call
//     carries index, id, type and name, the argument text follows in several
//     later deltas. Usage is always present in JSON answers and, in streams,
//     sent as a final chunk with empty choices when the request asks for it
//     with stream_options.include_usage.
//   - POST /v1/responses is the OpenAI Responses API, as the openai-go SDK
//     parses it: a JSON response object whose output holds a reasoning item
//     (Step.Reasoning as its summary, with an encrypted_content the server
//     signs when the request includes "reasoning.encrypted_content"), a
//     message item (Step.Text) and function_call items (Step.ToolCalls);
//     or named SSE events from response.created to response.completed
//     (response.incomplete for the finish reasons "length" and
//     "content_filter"). The request is checked as the real API checks it:
//     a model; every function_call_output after its function_call, every
//     function_call with an output; and a call issued with a reasoning item
//     sent back after that reasoning item, whose encrypted content must be
//     the server's. Refusals are HTTP 400 invalid_request_error.
//   - Error statuses carry the OpenAI error body
//     {"error":{"message":...,"type":...,"param":null,"code":...}} and an
//     optional Retry-After header.
//   - GET /v1/models and GET /v1/models/{id} list the configured model names.
//
// A script is a queue of Step values consumed one per chat request, in the
// order the requests arrive. When the script is exhausted the Responder set
// with SetResponder (or WithResponder) decides; without one the server
// answers HTTP 500 with a "script exhausted" error. Steps can also delay,
// hang until the client gives up, fail with an error status, break, stall
// or cut short (EndAfterChunks) a stream midway, or answer with a raw body
// that is not the protocol (Body, HTMLStep). Every chat request is recorded and can be inspected
// with Requests, or awaited with WaitRequests and WaitFinished.
//
// Requests are served concurrently; a Server is safe for concurrent use.
package fakellm
