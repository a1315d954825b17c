// Package fakediscord is an in-process fake of Discord for one bot, the one
// stand-in for Discord in Talaria's tests. It speaks the wire protocols as
// Discord's clients use them:
//
//   - the REST API under /api/v10/ (the bot's token in an
//     "Authorization: Bot <token>" header; errors as {"message", "code"}
//     with Discord's JSON error codes; a rate limit is HTTP 429 with
//     Retry-After and {"retry_after": seconds, "global": false}): Get
//     Current User, Get Gateway (Bot), Get Channel, Create Message, Edit
//     Message, Trigger Typing Indicator, Start Thread from Message, Create
//     Interaction Response, and the interaction's webhook (Create Followup
//     Message, Edit Original Interaction Response); Create Message takes
//     JSON, or a multipart form of payload_json and files[n] (a file over
//     10 MiB is HTTP 413, code 40005);
//   - the CDN, on the fake's own host under /attachments/<channel>/<id>/
//     <name>: each attachment at a URL signed as Discord signs them (ex,
//     is, hm), taking no token; an unsigned, tampered or expired one is
//     404 "This content is no longer available.";
//   - the Gateway, a WebSocket at the URL Get Gateway gives: HELLO (op 10)
//     with a heartbeat interval, IDENTIFY (op 2) answered by READY, or
//     RESUME (op 6) answered by the events after the client's sequence
//     number and RESUMED; heartbeats (op 1) acknowledged (op 11);
//     dispatches (op 0) of MESSAGE_CREATE and INTERACTION_CREATE, each
//     with the session's next sequence number; a wrong token is closed
//     with 4004, an unknown session to resume is told INVALID_SESSION
//     (op 9).
//
// Tests push what users do (SendDM, Mention, Press; with files
// SendDMFiles, MentionFiles, and SendVoice, a voice message with the
// IS_VOICE_MESSAGE flag), read the CDN's requests (Downloads), replay an
// event as a resumed session may (Redeliver), drop the connection (Drop),
// and read what the bot sent (Sent, WaitSent, Ephemerals; a message's
// Files are what it uploaded). A route's calls can be held unanswered
// after the first n (HoldAfter, Held, Release: a held call whose client
// goes away is never taken) or refused (FailNext). As on Discord, the bot
// receives its own messages, an interaction must be answered within 3
// seconds and once, and what users say while no bot is connected is not
// delivered later.
package fakediscord
