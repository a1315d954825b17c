package workflows

import (
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/temporal"
)

// How much a coordinator takes. A message travels in Temporal payloads
// (the delivery, its turn's input), the coordinator carries its queue, its
// running and last turns' messages across continue-as-new, and Temporal
// refuses a payload over 2 MiB: a coordinator whose state grew past that
// could neither run nor answer again. So a message is refused, before
// anything of it is kept, when it weighs too much alone, or when what the
// coordinator carries would weigh too much with it. Weights are of the
// encoded payload (JSON: a '<' weighs six bytes), not of the text.
const (
	// MaxMessageBytes bounds one message's text where it is taken (the
	// API, the CLI): its payload holds it twice.
	MaxMessageBytes = 256 << 10
	// maxMessagePayload bounds one message's payload.
	maxMessagePayload = 768 << 10
	// maxCarriedPayload bounds what a coordinator carries: the messages
	// queued, starting and of its running and last turns, and the steers
	// sent to its running turn.
	maxCarriedPayload = 1280 << 10
)

// Error types of a message refused for its size: the Type of the
// temporal.ApplicationError the sender gets.
const (
	ErrTypeMessageTooLarge = "MessageTooLarge"
	ErrTypeQueueFull       = "QueueFull"
)

// payloadSize is what v weighs as Temporal's JSON payload. Pure.
func payloadSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// checkSize refuses a message that weighs more than maxMessagePayload.
// Pure.
func checkSize(m Message) error {
	if n := payloadSize(m); n > maxMessagePayload {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("a message of %d bytes as sent: at most %d (send a long text as a file)", n, maxMessagePayload), ErrTypeMessageTooLarge, nil)
	}
	return nil
}

// carried is what the coordinator carries now. Pure.
func (s *session) carried() int {
	total := payloadSize(s.queue)
	if s.starting != nil {
		total += payloadSize(*s.starting)
	}
	if s.running != nil {
		total += payloadSize(s.running.template) + s.running.steered
	}
	if s.last != nil && s.last.reports { // carried across continue-as-new (carry)
		total += payloadSize(s.last.template)
	}
	return total
}

// checkRoom refuses a new message when the coordinator would carry more
// than maxCarriedPayload with it; one it already holds (a delivery again)
// is never refused. Pure.
func (s *session) checkRoom(m Message) error {
	if s.holds(m.RequestID) {
		return nil
	}
	carried, size := s.carried(), payloadSize(m)
	if carried+size <= maxCarriedPayload {
		return nil
	}
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("the session holds %d bytes of messages (%d waiting): send this one once they have run", carried, len(s.queue)),
		ErrTypeQueueFull, nil)
}
