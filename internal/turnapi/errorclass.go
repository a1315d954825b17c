package turnapi

// ErrorClass says what kind of failure a model call had. Its value is
// also the type of the application error a failed model call ends with.
type ErrorClass string

// Classes of model-call failures.
const (
	ClassRateLimit       ErrorClass = "rate_limit"
	ClassOverloaded      ErrorClass = "overloaded"
	ClassServer          ErrorClass = "server_error"
	ClassTimeout         ErrorClass = "timeout"
	ClassNetwork         ErrorClass = "network"
	ClassAuth            ErrorClass = "auth"
	ClassBilling         ErrorClass = "billing"
	ClassContextOverflow ErrorClass = "context_overflow"
	ClassModelNotFound   ErrorClass = "model_not_found"
	ClassBadRequest      ErrorClass = "bad_request"
	ClassCancelled       ErrorClass = "cancelled"
	// ClassTruncatedReply: a stream ended (or its connection broke) after
	// part of the reply, without a finish reason or end-of-stream marker.
	ClassTruncatedReply ErrorClass = "truncated_reply"
	// ClassInvalidResponse: the body is not the chat completion protocol
	// (an HTML page, malformed JSON, an SSE stream of something else).
	ClassInvalidResponse ErrorClass = "invalid_response"
)

// Retryable reports whether the same request may succeed if simply sent again.
func (c ErrorClass) Retryable() bool {
	switch c {
	case ClassRateLimit, ClassOverloaded, ClassServer, ClassTimeout, ClassNetwork,
		ClassTruncatedReply, ClassInvalidResponse:
		return true
	}
	return false
}

// MaxAttempts bounds the attempts of a call that fails with this class,
// whatever the caller's retry policy allows (0: no bound of its own): an
// attempt numbered MaxAttempts or more that fails so is the last, counting
// every attempt of the call whatever failed in it. A body that is not the
// protocol seldom becomes one, and a model that said nothing for the whole
// timeout seldom answers the next time either: each is tried at most 3
// times in all, so a hanging model costs three timeouts, not one per
// attempt of the policy.
func (c ErrorClass) MaxAttempts() int {
	switch c {
	case ClassInvalidResponse, ClassTimeout:
		return 3
	}
	return 0
}
