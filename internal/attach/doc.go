// Package attach takes the files people send with a message — pictures,
// voice memos, documents — the same way for every door: their type is
// told by their content, never by their name; each kind has a size
// limit; a file is saved into the working directory under a name derived
// from its content (so a file received twice is saved once) through an
// [os.Root], which no link placed there by a command can lead out of; a
// voice memo is transcribed through an OpenAI-compatible
// /v1/audio/transcriptions endpoint.
package attach
