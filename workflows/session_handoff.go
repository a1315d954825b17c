package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"
)

// The handoff: how a message reaches a session's coordinator and how its
// sender learns the turn it became. A sender delivers the message with
// Update-with-Start (UpdateDeliver; the coordinator is started when none
// runs). The update is durable once accepted and completes with a
// Delivery: the turn the message started or steered, or its place in the
// queue. A sender that needs the turn of a queued message asks
// UpdateAwaitTurn, which completes when that turn starts. Neither polls:
// each is one request the server answers when the coordinator has the
// answer, and neither leaves more than one entry per recent message in the
// coordinator beyond a few minutes (see assignedKeep and Claim).
const (
	// UpdateDeliver delivers a Message to the session; it returns a
	// Delivery. Its validator refuses a message without a request id or
	// with an unknown busy-input mode.
	UpdateDeliver = "deliver"
	// UpdateAwaitTurn takes a request id and returns a Delivery once the
	// message has its turn (or, when the coordinator continues as new
	// meanwhile, its place in the queue: ask again).
	UpdateAwaitTurn = "await-turn"
	// UpdateWithdraw takes a request id and withdraws its message: taken
	// out of the queue when it waits there, refused when it comes later
	// (DeliveryWithdrawn, to its sender too). A message that has started
	// or steered a turn is where it is: the answer says which.
	UpdateWithdraw = "withdraw"
)

// maxRequestID bounds a request id (a sender's choice; the store keeps a
// digest of long ones, see reservationKey).
const maxRequestID = 1024

// DeliveryOutcome says what became of a delivered message.
type DeliveryOutcome string

// Delivery outcomes.
const (
	// DeliveryStarted: the message runs as turn TurnID.
	DeliveryStarted DeliveryOutcome = "started"
	// DeliverySteered: the message was handed to the running turn TurnID.
	DeliverySteered DeliveryOutcome = "steered"
	// DeliveryQueued: the message waits at Position (1 is next); ask
	// UpdateAwaitTurn for its turn.
	DeliveryQueued DeliveryOutcome = "queued"
	// DeliveryUnknown: the coordinator knows no message with this request
	// id (UpdateAwaitTurn only: its turn started two runs of the
	// coordinator ago, or it never arrived).
	DeliveryUnknown DeliveryOutcome = "unknown"
	// DeliveryWithdrawn: the message was withdrawn (UpdateWithdraw) and
	// will not run.
	DeliveryWithdrawn DeliveryOutcome = "withdrawn"
)

// Delivery is what UpdateDeliver and UpdateAwaitTurn return.
type Delivery struct {
	RequestID string          `json:"request_id"`
	Outcome   DeliveryOutcome `json:"outcome"`
	// TurnID is the workflow id of the message's turn (started, steered).
	TurnID string `json:"turn_id,omitempty"`
	// Position is the message's place in the queue (queued), 1 first.
	Position int `json:"position,omitempty"`
}

// ErrNoRequestID refuses a message a sender could never find again.
var ErrNoRequestID = errors.New("a message needs a request id")

// ValidateMessage checks a delivered message before the coordinator takes
// it (the UpdateDeliver validator). Pure.
func ValidateMessage(m Message) error {
	if strings.TrimSpace(m.RequestID) == "" {
		return ErrNoRequestID
	}
	if len(m.RequestID) > maxRequestID {
		return fmt.Errorf("request id of %d bytes (at most %d)", len(m.RequestID), maxRequestID)
	}
	if _, err := ParseBusyMode(string(m.Mode)); err != nil {
		return err
	}
	return checkSize(m)
}

// validateRequestID checks an UpdateAwaitTurn argument. Pure.
func validateRequestID(requestID string) error {
	return ValidateMessage(Message{RequestID: requestID})
}

// setHandoff registers the coordinator's update handlers; they run with
// the run's epoch (the SDK gives a handler a context of its own).
func (s *session) setHandoff(ctx workflow.Context) error {
	deliver := func(h workflow.Context, m Message) (Delivery, error) { return s.deliver(inheritEpoch(ctx, h), m) }
	awaitTurn := func(h workflow.Context, requestID string) (Delivery, error) {
		return s.awaitTurn(inheritEpoch(ctx, h), requestID)
	}
	validate := func(m Message) error {
		if err := ValidateMessage(m); err != nil {
			return err
		}
		if slices.Contains(s.withdrawn, m.RequestID) {
			return nil
		}
		return s.checkRoom(m)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateDeliver, deliver,
		workflow.UpdateHandlerOptions{Validator: validate}); err != nil {
		return fmt.Errorf("register %s: %w", UpdateDeliver, err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateAwaitTurn, awaitTurn,
		workflow.UpdateHandlerOptions{Validator: validateRequestID}); err != nil {
		return fmt.Errorf("register %s: %w", UpdateAwaitTurn, err)
	}
	withdraw := func(h workflow.Context, requestID string) (Delivery, error) {
		return s.withdraw(inheritEpoch(ctx, h), requestID)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateWithdraw, withdraw,
		workflow.UpdateHandlerOptions{Validator: validateRequestID}); err != nil {
		return fmt.Errorf("register %s: %w", UpdateWithdraw, err)
	}
	return nil
}

// maxWithdrawn bounds the withdrawn request ids kept: the oldest go first.
const maxWithdrawn = 256

// withdraw is the UpdateWithdraw handler: a message being started is
// waited for; one that started or steered a turn is answered where it is;
// any other is withdrawn: taken out of the queue (nothing is owed its
// sender), and remembered, so that it is refused should it come later.
func (s *session) withdraw(ctx workflow.Context, requestID string) (Delivery, error) {
	err := workflow.Await(ctx, func() bool { return s.starting == nil || s.starting.RequestID != requestID })
	if err != nil {
		return Delivery{}, err
	}
	if d := s.where(requestID); d.TurnID != "" {
		return d, nil
	}
	if i := queueIndex(s.queue, requestID); i >= 0 {
		s.queue = slices.Delete(s.queue, i, i+1)
		delete(s.owed, requestID)
	}
	if !slices.Contains(s.withdrawn, requestID) {
		s.withdrawn = append(s.withdrawn, requestID)
		if n := len(s.withdrawn) - maxWithdrawn; n > 0 {
			s.withdrawn = slices.Delete(s.withdrawn, 0, n)
		}
	}
	return Delivery{RequestID: requestID, Outcome: DeliveryWithdrawn}, nil
}

// deliver is the UpdateDeliver handler. It takes the message as the
// message signal would (queue, interrupt or steer the running turn) once
// no turn is being started, and answers at once unless the message is to
// start next (the coordinator is free, or it interrupts): then it answers
// when its turn has started. A request id it already holds is not taken
// twice (a sender's retry): it is answered as UpdateAwaitTurn would.
func (s *session) deliver(ctx workflow.Context, m Message) (Delivery, error) {
	if err := workflow.Await(ctx, func() bool { return s.starting == nil }); err != nil {
		return Delivery{}, err
	}
	if slices.Contains(s.withdrawn, m.RequestID) {
		return Delivery{RequestID: m.RequestID, Outcome: DeliveryWithdrawn}, nil
	}
	if !s.holds(m.RequestID) {
		// Deliveries validated at once all passed the same check: the one
		// that would now overfill the coordinator is refused here.
		if err := s.checkRoom(m); err != nil {
			return Delivery{}, err
		}
		d, answered := s.take(ctx, m)
		s.nudge()
		if answered {
			return d, nil
		}
	}
	return s.awaitTurn(ctx, m.RequestID)
}

// take applies a new message; answered is false when the sender should
// wait for its turn to start.
func (s *session) take(ctx workflow.Context, m Message) (d Delivery, answered bool) {
	if s.running == nil {
		s.queue = append(s.queue, m)
		if len(s.queue) == 1 {
			return Delivery{}, false
		}
		return s.answer(ctx, m.RequestID), true
	}
	s.accept(ctx, m)
	switch m.Mode {
	case BusySteer:
		if id, ok := s.assigned[m.RequestID]; ok {
			return Delivery{RequestID: m.RequestID, Outcome: DeliverySteered, TurnID: id}, true
		}
		return Delivery{}, false // the turn ended first: the steer runs next
	case BusyQueue:
		return s.answer(ctx, m.RequestID), true
	}
	return Delivery{}, false // interrupt: it runs next
}

// awaitTurn is the UpdateAwaitTurn handler: it answers once the request's
// message has its turn, or at once when the coordinator does not hold it,
// or when the coordinator continues as new (the message waits in the next
// run: ask again).
func (s *session) awaitTurn(ctx workflow.Context, requestID string) (Delivery, error) {
	err := workflow.Await(ctx, func() bool {
		_, ok := s.assigned[requestID]
		_, owed := s.claims[requestID]
		return ok || owed || s.continuing || !s.pending(requestID)
	})
	if err != nil {
		return Delivery{}, err
	}
	return s.answer(ctx, requestID), nil
}

// answer is where a request is, told to its sender: a sender told its
// message is queued is owed its turn (the entry that says it outlives the
// runs, see claims); one told its turn is paid.
func (s *session) answer(ctx workflow.Context, requestID string) Delivery {
	d := s.where(requestID)
	switch d.Outcome {
	case DeliveryQueued:
		s.owed[requestID] = true
	case DeliveryStarted, DeliverySteered:
		s.settle(requestID, d.TurnID, workflow.Now(ctx))
	}
	return d
}

// where says what became of a request, as far as this run knows.
func (s *session) where(requestID string) Delivery {
	d := Delivery{RequestID: requestID, Outcome: DeliveryUnknown}
	if id, ok := s.assigned[requestID]; ok {
		d.Outcome, d.TurnID = DeliveryStarted, id
		if s.steered(requestID, id) {
			d.Outcome = DeliverySteered
		}
		return d
	}
	if id, ok := s.claims[requestID]; ok {
		d.Outcome, d.TurnID = DeliveryStarted, id
		return d
	}
	if s.running != nil && s.running.template.RequestID == requestID {
		d.Outcome, d.TurnID = DeliveryStarted, s.running.id
		return d
	}
	if i := queueIndex(s.queue, requestID); i >= 0 {
		d.Outcome, d.Position = DeliveryQueued, i+1
		if s.starting != nil {
			d.Position++
		}
		return d
	}
	if slices.Contains(s.withdrawn, requestID) {
		d.Outcome = DeliveryWithdrawn
	}
	return d
}

// steered: the request's turn is another message's, which it steered, as
// far as this run knows that turn (running, or the last to end).
func (s *session) steered(requestID, turnID string) bool {
	for _, t := range []*runningTurn{s.running, s.last} {
		if t != nil && t.id == turnID {
			return t.template.RequestID != requestID
		}
	}
	return false
}

// holds reports whether the coordinator already has the request: queued,
// being started, running or started recently.
func (s *session) holds(requestID string) bool {
	if _, ok := s.assigned[requestID]; ok {
		return true
	}
	if _, ok := s.claims[requestID]; ok {
		return true
	}
	return s.pending(requestID) || (s.running != nil && s.running.template.RequestID == requestID)
}

// pending reports whether the request's message waits for its turn.
func (s *session) pending(requestID string) bool {
	return queueIndex(s.queue, requestID) >= 0 || (s.starting != nil && s.starting.RequestID == requestID)
}

// queueIndex is the index of the request's message in q, or -1. Pure.
func queueIndex(q []Message, requestID string) int {
	for i, m := range q {
		if m.RequestID == requestID {
			return i
		}
	}
	return -1
}

// nudge wakes the coordinator's main loop after a handler changed its
// state (a message queued while it waits idle).
func (s *session) nudge() {
	s.wake.SendAsync(true)
}

// maxClaims bounds the turns kept for senders that were told their message
// is queued and never came back to ask for its turn (a sender that went
// away): the oldest go first.
const maxClaims = 1024

// Claim is the turn of a message whose sender was told it is queued and
// has not been told its turn yet. Claims are carried from run to run until
// their sender asks (UpdateAwaitTurn), however many runs that takes.
type Claim struct {
	RequestID, TurnID string
}

// claim keeps the turn of an owed request until its sender asks.
func (s *session) claim(requestID, turnID string) {
	delete(s.owed, requestID)
	if _, ok := s.claims[requestID]; !ok {
		s.claimOrder = append(s.claimOrder, requestID)
	}
	s.claims[requestID] = turnID
	for len(s.claimOrder) > maxClaims {
		delete(s.claims, s.claimOrder[0])
		s.claimOrder = s.claimOrder[1:]
	}
}

// settle forgets what the coordinator owed a sender that got its turn; the
// turn stays among the recent ones (assignedKeep from now), for a sender
// whose answer was lost on its way.
func (s *session) settle(requestID, turnID string, now time.Time) {
	s.assigned[requestID], s.assignedAt[requestID] = turnID, now
	delete(s.owed, requestID)
	if _, ok := s.claims[requestID]; ok {
		delete(s.claims, requestID)
		s.claimOrder = slices.DeleteFunc(s.claimOrder, func(r string) bool { return r == requestID })
	}
}
