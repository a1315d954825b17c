// Package fakeslack is an in-process fake of Slack for one app, the one
// stand-in for Slack in Talaria's tests. It speaks the wire protocols as
// Slack clients use them: the Web API (POST /api/<method>, form-encoded
// or JSON, the token in the form or as a Bearer header, answers
// {"ok": true, ...} or {"ok": false, "error": "..."}; a rate limit is
// HTTP 429 with Retry-After) for auth.test, apps.connections.open,
// chat.postMessage, chat.update, chat.postEphemeral, files.info,
// files.getUploadURLExternal and files.completeUploadExternal; and Socket Mode:
// apps.connections.open (with the app-level token) gives a ws:// URL to
// this server, which sends
// {"type": "hello"}, then events_api and interactive envelopes, pings the
// client, and expects each envelope acknowledged ({"envelope_id": ...});
// one left unacknowledged is delivered again after RedeliverAfter, as a
// new envelope with retry_attempt incremented and retry_reason "timeout",
// as Slack does. Files: a message a user sends with files is a message
// event of subtype file_share (an app_mention in a channel) carrying the
// files' objects, each served at its url_private(_download) under
// /files-pri/ only to a request with the bot token as a Bearer header
// (one without is redirected to the sign-in page, as Slack does); an
// upload's bytes are posted to the upload_url files.getUploadURLExternal
// gave (/upload/v1/...). Tests push what users do (SendDM, Mention,
// SendDMFiles, MentionFiles, Press) and read what the bot sent (Sent,
// WaitSent, Ephemerals, Uploads), the files' downloads (Fetches) and what
// is not acknowledged (Pending). A method's calls can be held unanswered
// after the first n (HoldAfter, Held, Release: a held call whose client
// goes away is never taken) or refused (FailNext).
package fakeslack
