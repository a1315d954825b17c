package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
)

// How much text a coordinator takes. A message's text travels in Temporal
// payloads twice (the message and its turn's input), the coordinator's
// queue is carried across continue-as-new and answered to status queries,
// and Temporal refuses a payload over 2 MiB: a coordinator whose state
// grew past that could neither run nor answer again. So a message is
// refused at the door (the UpdateDeliver validator, before anything is
// recorded) when it is too long, or when the messages waiting before it
// already hold the queue's share.
const (
	// MaxMessageBytes bounds one message's text.
	MaxMessageBytes = 512 << 10
	// maxQueuedBytes bounds the text of the messages a coordinator holds
	// queued, each counted as it travels (messageBytes).
	maxQueuedBytes = 1 << 20
)

// Error types of a message refused for its size: the Type of the
// temporal.ApplicationError the sender gets.
const (
	ErrTypeMessageTooLarge = "MessageTooLarge"
	ErrTypeQueueFull       = "QueueFull"
)

// checkSize refuses a message longer than MaxMessageBytes. Pure.
func checkSize(m Message) error {
	if n := max(len(m.Text), len(m.Turn.UserMessage)); n > MaxMessageBytes {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("a message of %d bytes: at most %d (send a long text as a file)", n, MaxMessageBytes), ErrTypeMessageTooLarge, nil)
	}
	return nil
}

// messageBytes is what a message's text weighs in the coordinator's
// state: its text and its turn's. Pure.
func messageBytes(m Message) int {
	return len(m.Text) + len(m.Turn.UserMessage)
}

// checkRoom refuses a new message when those queued and it would weigh
// more than maxQueuedBytes; one the coordinator already holds (a delivery
// again) is never refused. Pure.
func checkRoom(queue []Message, m Message, held bool) error {
	if held {
		return nil
	}
	total := messageBytes(m)
	for _, q := range queue {
		total += messageBytes(q)
	}
	if total <= maxQueuedBytes {
		return nil
	}
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("the session has %d messages waiting, %d bytes in all: send this one once they have run", len(queue), total-messageBytes(m)),
		ErrTypeQueueFull, nil)
}
