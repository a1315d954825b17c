// Package api is Talaria's HTTP API: an OpenAI-compatible surface
// (/v1/models, /v1/chat/completions, /v1/responses), durable runs with a
// live event stream (/v1/runs), the session and cron job stores
// (/api/sessions, /api/jobs) and a web chat page at /.
//
// Every way in hands a message to the engine the way the CLI does
// (engine.Runtime.StartMessage: one durable handoff to the session's
// coordinator) and follows the same live events (the store's events of a
// turn). The API holds no state of its own: a restarted API process, or
// several behind a load balancer, serve the same runs, and an event stream
// resumes with Last-Event-ID where it broke.
//
// Every route but GET /health asks for the bearer key (Authorization:
// Bearer KEY), compared in constant time. Errors have one JSON shape,
// OpenAI's: {"error": {"message", "type", "code"}}. Request bodies are
// bounded (413 beyond), and so are the server's read and idle times.
package api
