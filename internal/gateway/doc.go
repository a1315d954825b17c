// Package gateway connects messaging platforms (Telegram, Slack) to the
// engine: an inbound chat message becomes a message of the chat's session,
// handed to its coordinator the way the CLI and the API hand theirs, and
// the turn's reply goes back to the chat.
//
// A platform is a small adapter behind the Platform interface. The
// gateway decides who may reach the agent (Access: deny by default), which
// session a chat's message belongs to (SessionKey, with Hermes' keys), and
// what a chat command means (Commands). Durability is the engine's: an
// update is acknowledged to its platform only after its handoff is
// durable, and replies are sent by activities keyed by turn and part.
package gateway
