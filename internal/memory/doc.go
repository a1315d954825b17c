// Package memory is what the agent remembers beyond its files (SOUL.md,
// MEMORY.md, USER.md, always on): a Provider recalls, before a turn's
// first model call, what past conversations hold that bears on the
// message, and is told of each finished turn and of each session's end.
// One provider is on at a time: built-in recall (session summaries and
// the transcripts, searched by text and, when an embeddings endpoint is
// configured, by meaning) or an external memory service (Honcho, Mem0,
// Supermemory), each a small adapter over its documented HTTP API.
//
// What a provider recalls is text from outside the conversation: it is
// scanned for injection like memory entries (a passage that fails is left
// out with a warning), bounded in size, and shown to the model in one
// block of the call's context, never stored as a user message. A
// provider that is down or slow costs one line in the log; the turn goes
// on without it.
package memory
