// Package faketelegram is an in-process fake of the Telegram Bot API, the
// one stand-in for Telegram in Talaria's tests. It speaks the real wire
// protocol as Bot API clients use it: POST (form-encoded or JSON) to
// /bot<token>/<method>, answers {"ok": true, "result": ...} or
// {"ok": false, "error_code", "description", "parameters"}; getUpdates
// long-polls, and an offset acknowledges every update below it, as
// Telegram does. Tests push what users send (Send, Press) and read what
// the bot sent (Sent, WaitSent) and how it answered presses (Answers). A
// method's calls can be held unanswered after the first n (HoldAfter,
// Held, Release: a held call whose client goes away is never taken) or
// refused as a flood is (FailNext), to stop a process between two calls.
package faketelegram
