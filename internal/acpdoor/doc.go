// Package acpdoor is Talaria's door for editors: an Agent Client Protocol
// agent (JSON-RPC over stdio, github.com/coder/acp-go-sdk) that is one more
// thin client of the engine. A prompt is handed to the session's durable
// turn as the CLI hands one; the turn's live events become session/update
// notifications; an approval the turn waits on becomes a permission
// request; session/cancel stops the turn. The turn does not belong to the
// editor's process: closing the editor leaves it running, and session/load
// in a new process replays the session and follows a turn still running.
package acpdoor
