// Package tools holds Talaria's tool registry and the built-in tools the
// model can call: read_file, write_file, terminal and todo.
//
// Every tool describes itself to the model with an OpenAI function-calling
// definition (a JSON schema of its arguments) and runs with an [Env] that
// carries the session's working directory, identifiers and the todo store.
// Argument names follow the Hermes agent so prompts and models trained on it
// work unchanged.
//
// Tool results are compact JSON strings that the model can parse. A
// [Registry] turns every kind of failure (unknown tool, malformed JSON
// arguments, a tool error, even a panic inside a tool) into a [Result] with
// IsError set, so a conversation turn never aborts because of a bad call.
// [Registry.RunBatch] runs the tool calls of one model response
// concurrently and returns the results in the original call order.
//
// Definitions are byte-stable: the same registry always renders the same
// definitions in the same order, which keeps provider-side prompt caching
// effective.
package tools
