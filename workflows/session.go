package workflows

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Names of the session workflow and its controls.
const (
	// SessionWorkflowName runs a session's turns one after another.
	SessionWorkflowName = "SessionWorkflow"
	// SignalMessage sends a Message to a session (start it with
	// SignalWithStart): it becomes a turn, is queued, interrupts or steers,
	// as its Mode says.
	SignalMessage = "message"
	// QuerySession returns the session's SessionState.
	QuerySession = "session"
)

// SessionWorkflowID is the workflow id of a session's coordinator.
func SessionWorkflowID(sessionID string) string { return "session/" + sessionID }

// BusyMode says what a message does when it arrives while a turn runs.
type BusyMode string

// Busy-input modes.
const (
	// BusyInterrupt stops the running turn, then runs the message next (default).
	BusyInterrupt BusyMode = "interrupt"
	// BusyQueue runs the message after the running turn and those queued before it.
	BusyQueue BusyMode = "queue"
	// BusySteer hands the message to the running turn at its next safe point.
	BusySteer BusyMode = "steer"
)

// ParseBusyMode validates a mode name; empty means BusyInterrupt.
func ParseBusyMode(s string) (BusyMode, error) {
	switch m := BusyMode(s); m {
	case "":
		return BusyInterrupt, nil
	case BusyInterrupt, BusyQueue, BusySteer:
		return m, nil
	}
	return "", fmt.Errorf("unknown busy-input mode %q (want interrupt, queue or steer)", s)
}

// Message is one user message sent to a session.
type Message struct {
	// RequestID lets the sender find the turn its message became.
	RequestID string
	Text      string
	Mode      BusyMode
	// Turn is the template of the turn to run: model, budget, working
	// directory, timeouts, limits. Session, number and text are filled in.
	Turn TurnInput
}

// SessionInput starts (or continues as new) a session's coordinator.
type SessionInput struct {
	SessionID string
	// Queue holds messages waiting to run, carried across continue-as-new.
	Queue []Message
	// Assigned maps recent request ids to the turn they became.
	Assigned map[string]string
}

// SessionState is what QuerySession returns.
type SessionState struct {
	SessionID string `json:"session_id"`
	// Running is the workflow id of the turn running now, if any.
	Running string `json:"running,omitempty"`
	// Queued are the texts waiting, in order.
	Queued []string `json:"queued"`
	// Assigned maps recent request ids to their turn's workflow id.
	Assigned map[string]string `json:"assigned"`
}

// Session coordinator tuning.
const (
	// sessionIdle is how long an idle coordinator waits for a message
	// before it ends (the next message starts it again).
	sessionIdle = 10 * time.Minute
	// turnsPerRun bounds a coordinator run's history: it continues as new.
	turnsPerRun = 50
	// maxAssigned bounds the request-to-turn map.
	maxAssigned = 64
)

// SessionWorkflow runs a session's messages as turns, one at a time, in
// arrival order; the queue is durable (it lives in this workflow). Messages
// arriving while a turn runs interrupt it, queue or steer, per their mode;
// steers the turn could not deliver become the next message.
func SessionWorkflow(ctx workflow.Context, in SessionInput) error {
	s := &session{id: in.SessionID, queue: in.Queue, assigned: in.Assigned, order: sortedKeys(in.Assigned)}
	if s.assigned == nil {
		s.assigned = map[string]string{}
	}
	if err := workflow.SetQueryHandler(ctx, QuerySession, s.state); err != nil {
		return err
	}
	msgs := workflow.GetSignalChannel(ctx, SignalMessage)
	turns := 0
	for {
		if s.running == nil && len(s.queue) > 0 {
			if err := s.startNext(ctx); err != nil {
				return err
			}
			turns++
			continue
		}
		if s.running == nil {
			if turns >= turnsPerRun || !s.waitIdle(ctx, msgs) {
				s.drain(msgs)
				if len(s.queue) > 0 {
					continue
				}
				if turns >= turnsPerRun {
					return workflow.NewContinueAsNewError(ctx, SessionWorkflowName, s.carry())
				}
				return nil
			}
			continue
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(msgs, func(c workflow.ReceiveChannel, _ bool) {
			var m Message
			c.Receive(ctx, &m)
			s.accept(ctx, m)
		})
		sel.AddFuture(s.running.done, func(f workflow.Future) { s.finished(ctx, f) })
		sel.Select(ctx)
	}
}

// session is the coordinator's state.
type session struct {
	id       string
	queue    []Message
	assigned map[string]string
	order    []string // request ids in assignment order, for bounding
	running  *runningTurn
}

type runningTurn struct {
	id       string
	number   int
	template Message
	done     workflow.ChildWorkflowFuture
}

func (s *session) state() (SessionState, error) {
	st := SessionState{SessionID: s.id, Queued: []string{}, Assigned: s.assigned}
	if s.running != nil {
		st.Running = s.running.id
	}
	for _, m := range s.queue {
		st.Queued = append(st.Queued, m.Text)
	}
	return st, nil
}

// accept handles a message arriving while a turn runs.
func (s *session) accept(ctx workflow.Context, m Message) {
	if s.running == nil {
		s.queue = append(s.queue, m)
		return
	}
	switch m.Mode {
	case BusySteer:
		s.assign(m.RequestID, s.running.id)
		_ = workflow.SignalExternalWorkflow(ctx, s.running.id, "", SignalSteer, m.Text).Get(ctx, nil)
	case BusyQueue:
		s.queue = append(s.queue, m)
	default: // interrupt: stop the running turn, then this message runs first
		_ = workflow.SignalExternalWorkflow(ctx, s.running.id, "", SignalInterrupt, "a new message arrived").Get(ctx, nil)
		s.queue = append([]Message{m}, s.queue...)
	}
}

// startNext numbers the next queued message's turn and starts it.
func (s *session) startNext(ctx workflow.Context) error {
	m := s.queue[0]
	s.queue = s.queue[1:]
	var n int
	if err := bookkeep(ctx, turnapi.ReserveTurnName, s.id, m.Turn.Model, reservationKey(m)).Get(ctx, &n); err != nil {
		return err
	}
	in := m.Turn
	in.SessionID, in.TurnNumber, in.UserMessage = s.id, n, m.Text
	id := TurnWorkflowID(s.id, n)
	cctx := workflow.WithChildOptions(ctx, withTurnVisibility(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            id,
		TaskQueue:             TaskQueue,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, in))
	fut := workflow.ExecuteChildWorkflow(cctx, TurnWorkflowName, in)
	if err := fut.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		var already *temporal.ChildWorkflowExecutionAlreadyStartedError
		if !errors.As(err, &already) {
			return fmt.Errorf("start turn %s: %w", id, err)
		}
	}
	s.running = &runningTurn{id: id, number: n, template: m, done: fut}
	s.assign(m.RequestID, id)
	return nil
}

// finished handles the end of the running turn: undelivered steers run next.
func (s *session) finished(ctx workflow.Context, f workflow.Future) {
	var res ConversationResult
	_ = f.Get(ctx, &res) // a failed turn still ends; its outcome is in the store
	tmpl, number := s.running.template, s.running.number
	s.running = nil
	if reviewDue(tmpl.Turn.MemoryReviewEvery, number) {
		s.startReview(ctx, number, tmpl.Turn)
	}
	next := make([]Message, 0, len(res.PendingSteers))
	for i, text := range res.PendingSteers {
		next = append(next, Message{RequestID: fmt.Sprintf("%s/steer-%d", res.TurnID, i), Text: text, Mode: BusyQueue, Turn: tmpl.Turn})
	}
	s.queue = append(next, s.queue...)
}

// startReview starts a background memory review and does not wait for it:
// it runs beside the session's next turns, and its failure changes nothing.
func (s *session) startReview(ctx workflow.Context, number int, tmpl TurnInput) {
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            "review/" + s.id + "/" + fmt.Sprint(number),
		TaskQueue:             TaskQueue,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	})
	fut := workflow.ExecuteChildWorkflow(cctx, MemoryReviewWorkflowName, ReviewInput{SessionID: s.id, TurnNumber: number, Turn: tmpl})
	_ = fut.GetChildWorkflowExecution().Get(ctx, nil)
}

// waitIdle waits for a message while no turn runs; false after sessionIdle.
func (s *session) waitIdle(ctx workflow.Context, msgs workflow.ReceiveChannel) bool {
	got := false
	tctx, cancel := workflow.WithCancel(ctx)
	timer := workflow.NewTimer(tctx, sessionIdle)
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(msgs, func(c workflow.ReceiveChannel, _ bool) {
		var m Message
		c.Receive(ctx, &m)
		s.queue = append(s.queue, m)
		got = true
	})
	sel.AddFuture(timer, func(workflow.Future) {})
	sel.Select(ctx)
	cancel()
	return got
}

// drain queues every message already received, so none is lost when the
// coordinator ends or continues as new.
func (s *session) drain(msgs workflow.ReceiveChannel) {
	for {
		var m Message
		if !msgs.ReceiveAsync(&m) {
			return
		}
		s.queue = append(s.queue, m)
	}
}

func (s *session) carry() SessionInput {
	return SessionInput{SessionID: s.id, Queue: s.queue, Assigned: s.assigned}
}

// assign records which turn a request became, keeping the map bounded.
func (s *session) assign(requestID, turnID string) {
	if requestID == "" {
		return
	}
	if _, ok := s.assigned[requestID]; !ok {
		s.order = append(s.order, requestID)
	}
	s.assigned[requestID] = turnID
	for len(s.order) > maxAssigned {
		delete(s.assigned, s.order[0])
		s.order = s.order[1:]
	}
}

// maxReservationKey fits the store's column (256) with room to spare.
const maxReservationKey = 128

// reservationKey identifies the reservation of a message's turn within its
// session, so that a re-run of the reservation gets the same number: the
// request id, or a digest of a long one. Pure.
func reservationKey(m Message) string {
	if len(m.RequestID) <= maxReservationKey {
		return m.RequestID
	}
	sum := sha256.Sum256([]byte(m.RequestID))
	return "sha256:" + hex.EncodeToString(sum[:])
}
