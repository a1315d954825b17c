// Package fakellm is a scripted, in-process fake of a model provider: an
// OpenAI-compatible chat completions server that also speaks Anthropic
// Messages, the OpenAI Responses API and Ollama's native chat API, each at
// its own endpoint, from the same script. It is the only model fake in Talaria: unit tests,
// integration tests and benchmarks start one, point a client (go-openai,
// anthropic-sdk-go, openai-go, or a separately built talaria binary,
// through OPENAI_BASE_URL or a provider's base_url) at Server.URL, and
// script what the "model" answers.
//
// The server speaks each real wire protocol as its official client parses it:
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
//   - GET /v1/models and GET /v1/models/{id} list the configured model names,
//     with the fields WithModelInfo adds (a router's context_length and
//     pricing, vLLM's max_model_len, llama.cpp's meta).
//   - With WithOllamaContext (or WithOllamaParameter) the server is an
//     Ollama too: POST /api/show describes each listed model in Ollama's
//     shape (model_info's llama.context_length, the Modelfile parameters).
//     With WithLlamaCppProps, GET /props answers as llama.cpp's does.
//     ExtraRequests counts the requests of these endpoints.
//   - POST /v1/messages speaks Anthropic Messages from the same script. It
//     wants the key as x-api-key (or, as the official SDK sends it, a bearer
//     token) and an anthropic-version header, and refuses with HTTP 400 what
//     the real API refuses: no model or max_tokens, roles that do not
//     alternate or do not start with the user, empty text blocks, a final
//     assistant message ending in white space, tool_result and tool_use
//     blocks that do not pair up with the message before or after, a bad
//     thinking budget, a tool-use loop continued with thinking on but without
//     a thinking block this server signed, more than four cache_control
//     blocks. Answers are a JSON message or named events (message_start,
//     content_block_start/delta/stop, message_delta, message_stop); a step's
//     Reasoning becomes a signed thinking block, its finish reason a
//     stop_reason (stop→end_turn, length→max_tokens, tool_calls→tool_use,
//     content_filter→refusal, others as they are). Errors take Anthropic's
//     shape, typed by status. Prompt caching is simulated: the prefixes the
//     cache_control breakpoints mark (tools, system, messages; 1024 tokens
//     at least) are remembered for the server's lifetime, and usage reports
//     cache_read_input_tokens and cache_creation_input_tokens accordingly.
//     Request.Body holds the request in chat-completions form;
//     Request.CacheBreakpoints lists where its breakpoints are.
//   - POST /api/chat is Ollama's native chat API (Request.Wire WireOllama).
//     It refuses with HTTP 400 {"error": "..."} what Ollama refuses: no
//     model, a role other than system, user, assistant and tool, tool call
//     arguments that are not a JSON object. It streams unless the request
//     says "stream": false, as NDJSON: one JSON object a line, the
//     reasoning as "thinking" and the text in several lines, the tool calls
//     complete on one line (Ollama does not stream argument pieces;
//     arguments that are not an object are sent as {}; an id only when the
//     script names one, as newer Ollama versions send), then a "done": true
//     line with done_reason ("length" for the finish reason length, else
//     "stop"), prompt_eval_count and eval_count. Without streaming the
//     answer is that done line with the whole message. Request.Body holds
//     the request in chat-completions form: calls without an id get one
//     derived from their place (the same each time the history is sent),
//     tool results the id of the call they answer (by tool_call_id, else
//     by tool_name and order), options.num_predict as max_tokens. Errors
//     are {"error": "..."} with the step's status and Retry-After;
//     BreakAfterChunks, EndAfterChunks and StallAfterChunks count the
//     lines before the done line.
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
