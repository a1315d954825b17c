package workflows

import (
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"
)

// TestMessageBounds: a message is weighed as it is sent (a '<' is six
// bytes of JSON): one over maxMessagePayload is refused, and a new one
// with which the coordinator would carry more than maxCarriedPayload (its
// queue, the message starting, its running turn's with the steers sent to
// it, its last turn's); one the coordinator already holds never is.
func TestMessageBounds(t *testing.T) {
	t.Parallel()
	msg := func(id string, n int, fill string) Message {
		text := strings.Repeat(fill, n)
		return Message{RequestID: id, Text: text, Turn: TurnInput{UserMessage: text}}
	}
	quarter := maxCarriedPayload / 8 // a message of this much text weighs about a quarter
	full := func() *session {
		return &session{queue: []Message{msg("q1", quarter, "x")}, starting: ptr(msg("s1", quarter, "x")),
			running: &runningTurn{template: msg("r1", quarter, "x")}, assigned: map[string]string{}, claims: map[string]string{}}
	}
	steered := full()
	steered.running.steered = quarter * 2
	lasted := full()
	lasted.last = &runningTurn{template: msg("l1", quarter, "x"), reports: true}
	// room is the text that just fits beside full's.
	overhead := payloadSize(msg("n", 0, "x"))
	room := (maxCarriedPayload - full().carried() - overhead) / 2
	for _, c := range []struct {
		name    string
		err     error
		errType string
	}{
		{"plain text at the limit", checkSize(msg("a", (maxMessagePayload-payloadSize(msg("a", 0, "x")))/2, "x")), ""},
		{"plain text past the limit", checkSize(msg("a", (maxMessagePayload-payloadSize(msg("a", 0, "x")))/2+1, "x")), ErrTypeMessageTooLarge},
		{"angle brackets weigh six bytes each", checkSize(msg("a", maxMessagePayload/8, "<")), ErrTypeMessageTooLarge},
		{"into an empty coordinator", (&session{}).checkRoom(msg("n", quarter, "x")), ""},
		{"what just fits", full().checkRoom(msg("n", room, "x")), ""},
		{"past the share", full().checkRoom(msg("n", room+1, "x")), ErrTypeQueueFull},
		{"the running turn's steers count", steered.checkRoom(msg("n", 100, "x")), ErrTypeQueueFull},
		{"the last turn's message counts", lasted.checkRoom(msg("n", 100, "x")), ErrTypeQueueFull},
		{"held already", full().checkRoom(msg("q1", quarter*4, "x")), ""},
	} {
		var app *temporal.ApplicationError
		switch {
		case c.errType == "" && c.err != nil:
			t.Errorf("%s: %v", c.name, c.err)
		case c.errType != "" && (!errors.As(c.err, &app) || app.Type() != c.errType || !app.NonRetryable()):
			t.Errorf("%s: %v, want a non-retryable %s", c.name, c.err, c.errType)
		}
	}
}

func ptr[T any](v T) *T { return &v }
