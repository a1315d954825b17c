// Package talaria is the engine's API for its clients: the one surface the
// command line (cmd/talaria) is built on. It names the runtime (start a
// process, connect to a running serve, control a session: status, steer,
// stop, approvals, goals, compaction), the turn's vocabulary, the store's
// records and their views, and the services serve runs beside the worker.
//
// The answers every client gives live once, in the engine (for example
// Runtime.SessionStatus, which both `talaria status` and the API's
// GET /api/sessions/{id}/status return), and cmd/talaria imports nothing of
// Talaria but this package, config and the output packages (textline), so
// the command line is flags and output formatting over it: a test in
// cmd/talaria lists its imports.
package talaria
