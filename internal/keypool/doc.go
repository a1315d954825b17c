// Package keypool decides which key of a model endpoint's key pool a call
// sends, and how long a key that failed rests.
//
// An endpoint configured with several keys (api_keys, or api_key with
// commas) is a pool. A call sends the first key, in the configured order,
// that is not cooling down. A key the provider rate limits (HTTP 429) cools
// down for the Retry-After it was given (DefaultRateLimitCooldown when
// there is none, at most MaxRateLimitCooldown); a key it refuses (401, 403,
// or a billing failure: a revoked key, an account out of credit) cools
// down for AuthCooldown, so it is not tried again at every call. Other
// failures are not the key's: they cool nothing.
//
// A pool is identified by its endpoint: wire format, base URL (redacted:
// llm.RedactURL) and model, so the cool-downs of one endpoint, e.g. the
// primary, never touch another's, e.g. a fallback's. A key is identified
// by a short digest (KeyID) or its position in the pool ("key 2 of 3"):
// nothing here keeps, logs or shows a key or any of its characters.
//
// Everything here is pure; the cool-downs themselves are kept in the
// store by the caller, so they survive restarts and every worker sees
// them.
package keypool
