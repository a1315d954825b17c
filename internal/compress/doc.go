// Package compress holds the pure, deterministic parts of context
// compression: estimating a conversation's size, deciding when to compress,
// splitting the conversation into a verbatim head, a middle to summarise and
// a verbatim tail (never separating a tool call from its results), pruning
// large tool outputs, and building, validating and falling back on the
// structured summary that replaces the middle.
//
// Every function here is free of I/O, clocks, randomness and goroutines, so
// it may be called from Temporal workflow code as well as from activities.
// No function panics on any input; inputs are never modified.
package compress
