// Package fakeslack is an in-process fake of Slack for one app, the one
// stand-in for Slack in Talaria's tests. It speaks the wire protocols as
// Slack clients use them: the Web API (POST /api/<method>, form-encoded
// or JSON, the token in the form or as a Bearer header, answers
// {"ok": true, ...} or {"ok": false, "error": "..."}; a rate limit is
// HTTP 429 with Retry-After) for auth.test, apps.connections.open,
// chat.postMessage, chat.update and chat.postEphemeral; and Socket Mode:
// apps.connections.open (with the app-level token) gives a ws:// URL to
// this server, which sends
// {"type": "hello"}, then events_api and interactive envelopes, pings the
// client, and expects each envelope acknowledged ({"envelope_id": ...});
// one left unacknowledged is delivered again after RedeliverAfter, as a
// new envelope with retry_attempt incremented and retry_reason "timeout",
// as Slack does. Tests push what users do (SendDM, Mention, Press) and
// read what the bot sent (Sent, WaitSent, Ephemerals) and what is not
// acknowledged (Pending). A method's calls can be held unanswered after
// the first n (HoldAfter, Held, Release: a held call whose client goes
// away is never taken) or refused (FailNext).
package fakeslack
