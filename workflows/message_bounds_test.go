package workflows

import (
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"
)

// TestMessageBounds: a message over MaxMessageBytes is refused, and a new
// one that would make the queue weigh more than maxQueuedBytes; one the
// coordinator already holds never is.
func TestMessageBounds(t *testing.T) {
	t.Parallel()
	msg := func(n int) Message {
		text := strings.Repeat("x", n)
		return Message{RequestID: "r", Text: text, Turn: TurnInput{UserMessage: text}}
	}
	half := maxQueuedBytes / 4 // a message weighing half the queue's share
	for _, c := range []struct {
		name    string
		err     error
		errType string
	}{
		{"at the limit", checkSize(msg(MaxMessageBytes)), ""},
		{"over the limit", checkSize(msg(MaxMessageBytes + 1)), ErrTypeMessageTooLarge},
		{"into an empty queue", checkRoom(nil, msg(half), false), ""},
		{"filling the queue", checkRoom([]Message{msg(half)}, msg(half), false), ""},
		{"past the queue's share", checkRoom([]Message{msg(half)}, msg(half+1), false), ErrTypeQueueFull},
		{"held already", checkRoom([]Message{msg(half), msg(half)}, msg(half), true), ""},
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
