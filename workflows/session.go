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
	// as its Mode says. Senders deliver by update now (UpdateDeliver, see
	// session_handoff.go); the signal stays for coordinators and senders
	// of older code.
	SignalMessage = "message"
	// QuerySession returns the session's SessionState.
	QuerySession = "session"
	// SignalTurnEnded carries a turn's ConversationResult: from the turn
	// to its coordinator (TurnInput.ReportEnd), and from the coordinator to
	// the workflows whose messages the turn ran (Message.Notify).
	SignalTurnEnded = "turn-ended"
	// SignalTurnStarted carries a Delivery naming the turn a message
	// became (started or steered), to the workflow that sent it
	// (Message.Notify).
	SignalTurnStarted = "turn-started"
	// SignalReportEnd asks a running turn to signal its end to its
	// session's coordinator (SignalTurnEnded), from a coordinator run about
	// to continue as new while the turn runs (changeTurnEndAsked).
	SignalReportEnd = "report-end"
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
	// Notify: the sender is the workflow whose id is RequestID; the
	// coordinator signals it the turn the message became
	// (SignalTurnStarted) and how that turn ended (SignalTurnEnded).
	Notify bool `json:",omitempty"`
	// Sender is the workflow told (Notify) when it is not RequestID.
	Sender string `json:",omitempty"`
}

// SessionInput starts (or continues as new) a session's coordinator.
type SessionInput struct {
	SessionID string
	// Queue holds messages waiting to run, carried across continue-as-new.
	Queue []Message
	// Assigned maps recent request ids to the turn they became (carried by
	// older code: its 64 most recent; newer code carries Recent).
	Assigned map[string]string
	// Recent are the request ids answered or started within
	// assignedKeep, with their turn.
	Recent []Assignment `json:",omitempty"`
	// Running is the turn the previous run started and left running.
	Running *CarriedTurn `json:",omitempty"`
	// Owed are the request ids of queued messages whose senders were told
	// so; Claims the turns of such messages that started, until their
	// senders ask for them (see session_handoff.go).
	Owed   []string `json:",omitempty"`
	Claims []Claim  `json:",omitempty"`
	// Withdrawn are the request ids recently withdrawn (UpdateWithdraw),
	// oldest first: a delivery of one of them is refused.
	Withdrawn []string `json:",omitempty"`
	// MaxRunEvents overrides DefaultMaxRunEvents (0: the default).
	MaxRunEvents int `json:",omitempty"`
	// Idle overrides sessionIdle, how long the coordinator waits for a
	// message before it ends (0: the default).
	Idle time.Duration `json:",omitempty"`
	// LastEnded is the turn that ended last, for the steers it may still
	// report (ConversationResult.Late).
	LastEnded *CarriedTurn `json:",omitempty"`
}

// SessionState is what QuerySession returns.
type SessionState struct {
	SessionID string `json:"session_id"`
	// Running is the workflow id of the turn running now, if any.
	Running string `json:"running,omitempty"`
	// Queued are the texts waiting, in order.
	Queued []string `json:"queued"`
	// Assigned maps the request ids of messages started (or steered), or
	// answered, within assignedKeep to their turn's workflow id.
	Assigned map[string]string `json:"assigned"`
}

// Session coordinator tuning.
const (
	// sessionIdle is how long an idle coordinator waits for a message
	// before it ends (the next message starts it again).
	sessionIdle = 10 * time.Minute
	// turnsPerRun bounds the history of a run of older code
	// (DefaultVersion of changeSessionHandoff): it continues as new when
	// idle after that many turns. Newer runs use DefaultMaxRunEvents.
	turnsPerRun = 50
)

// SessionWorkflow runs a session's messages as turns, one at a time, in
// arrival order; the queue is durable (it lives in this workflow). Messages
// arriving while a turn runs interrupt it, queue or steer, per their mode;
// steers the turn could not deliver become the next message. Messages come
// by update (UpdateDeliver) or by signal (SignalMessage); the history of a
// run stays bounded (see session_continue.go).
func SessionWorkflow(ctx workflow.Context, in SessionInput) error {
	ctx = withEpoch(ctx)
	s := newSession(ctx, in)
	if err := workflow.SetQueryHandler(ctx, QuerySession, s.state); err != nil {
		return err
	}
	if err := s.setHandoff(ctx); err != nil {
		return err
	}
	s.handoff = has(ctx, changeSessionHandoff)
	if in.Running != nil {
		s.running = s.resume(ctx, *in.Running)
	}
	msgs := workflow.GetSignalChannel(ctx, SignalMessage)
	s.ended = workflow.GetSignalChannel(ctx, SignalTurnEnded)
	turns := 0
	for {
		if s.continueNow(ctx) {
			return s.continueAsNew(ctx, msgs)
		}
		if s.running == nil && len(s.queue) > 0 {
			if err := s.startNext(ctx); err != nil {
				return err
			}
			turns++
			continue
		}
		if s.running == nil {
			due := !s.handoff && turns >= turnsPerRun
			if due || !s.waitIdle(ctx, msgs) {
				if err := s.settleHandlers(ctx); err != nil {
					return err
				}
				s.drain(msgs)
				s.drainEnded(ctx)
				if len(s.queue) > 0 {
					continue
				}
				if due {
					return s.continueAsNew(ctx, msgs)
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
		if s.running.done != nil {
			sel.AddFuture(s.running.done, func(f workflow.Future) { s.finished(ctx, s.running.outcome(ctx, f)) })
		}
		sel.AddReceive(s.ended, func(c workflow.ReceiveChannel, _ bool) {
			var res ConversationResult
			c.Receive(ctx, &res)
			s.turnEnded(ctx, res)
		})
		sel.AddReceive(s.wake, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
		sel.Select(ctx)
	}
}

// newSession is a coordinator run's state from its input.
func newSession(ctx workflow.Context, in SessionInput) *session {
	s := &session{id: in.SessionID, input: in, queue: in.Queue, assigned: map[string]string{},
		assignedAt: map[string]time.Time{}, owed: map[string]bool{}, claims: map[string]string{},
		limit: runLimit(in), wake: workflow.NewBufferedChannel(ctx, 1)}
	now := workflow.Now(ctx)
	for _, k := range sortedKeys(in.Assigned) {
		s.assigned[k], s.assignedAt[k] = in.Assigned[k], now
	}
	for _, a := range in.Recent {
		s.assigned[a.RequestID], s.assignedAt[a.RequestID] = a.TurnID, a.At
	}
	for _, r := range in.Owed {
		s.owed[r] = true
	}
	for _, c := range in.Claims {
		s.claim(c.RequestID, c.TurnID)
	}
	s.withdrawn = in.Withdrawn
	if l := in.LastEnded; l != nil {
		s.last = &runningTurn{id: l.ID, number: l.Number, template: l.Template, lates: l.Lates, reports: true}
	}
	return s
}

// session is the coordinator's state.
type session struct {
	id    string
	input SessionInput
	queue []Message
	// assigned maps request ids to the turn they became; assignedAt says
	// when each was last started or answered: entries older than
	// assignedKeep are not carried to the next run.
	assigned   map[string]string
	assignedAt map[string]time.Time
	// owed and claims: see Claim.
	owed       map[string]bool
	claims     map[string]string
	claimOrder []string
	// withdrawn are the request ids recently withdrawn, oldest first.
	withdrawn []string
	running   *runningTurn
	// starting is the message whose turn is being started.
	starting *Message
	// handoff: this run has changeSessionHandoff (bounded history).
	handoff bool
	// limit is the history length this run continues as new at.
	limit int
	// continuing: this run is about to continue as new.
	continuing bool
	// wake tells the main loop an update handler changed the state.
	wake workflow.Channel
	// ended receives the turns' SignalTurnEnded.
	ended workflow.ReceiveChannel
	// last is the turn that ended last, for the steers it reports late.
	last *runningTurn
}

type runningTurn struct {
	id       string
	number   int
	template Message
	// done is the child's future, or the AwaitTurn activity's for a turn
	// an earlier run started (carried); nil for a carried turn that
	// reports its end (its SignalTurnEnded ends it).
	done    workflow.Future
	carried bool
	// reports: the turn signals its end (TurnInput.ReportEnd).
	reports bool
	// watchers are the workflows told of its end (Message.Notify).
	watchers []string
	// lates counts the late steer reports of an ended turn.
	lates int
	// steered is what the steers sent to it weigh (payloadSize).
	steered int
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
	// The turn may end while a signal to it is on its way (the main loop
	// runs meanwhile): what follows is about the turn signalled.
	turn := s.running
	switch m.Mode {
	case BusySteer:
		err := workflow.SignalExternalWorkflow(ctx, turn.id, "", SignalSteer, m.Text).Get(ctx, nil)
		if err != nil && has(ctx, changeSteerUndelivered) {
			// The turn ended before the steer reached it: the text is the
			// next message, and its sender learns the turn it became.
			s.queue = append([]Message{m}, s.queue...)
			turn.closed(ctx)
			return
		}
		s.assign(ctx, m.RequestID, turn.id)
		turn.steered += payloadSize(m)
		if s.running == turn {
			s.watch(ctx, m, DeliverySteered)
		}
		// Else the turn took the steer as it reported its end: it reports
		// the steer late, and the steer runs next.
	case BusyQueue:
		s.queue = append(s.queue, m)
		s.probe(ctx)
	default: // interrupt: stop the running turn, then this message runs first
		if workflow.SignalExternalWorkflow(ctx, turn.id, "", SignalInterrupt, "a new message arrived").Get(ctx, nil) != nil {
			turn.closed(ctx)
		}
		s.queue = append([]Message{m}, s.queue...)
	}
}

// startNext numbers the next queued message's turn and starts it.
func (s *session) startNext(ctx workflow.Context) error {
	m := s.queue[0]
	s.queue = s.queue[1:]
	s.starting = &m
	defer func() { s.starting = nil }()
	var n int
	if err := bookkeep(ctx, turnapi.ReserveTurnName, s.id, m.Turn.Model, reservationKey(m)).Get(ctx, &n); err != nil {
		return err
	}
	in := m.Turn
	in.SessionID, in.TurnNumber, in.UserMessage = s.id, n, m.Text
	// The run that starts a turn gets its end as the child's result; a
	// turn reports it by signal only when asked (changeTurnEndAsked).
	in.ReportEnd = !has(ctx, changeTurnEndAsked) && has(ctx, changeTurnEndSignal)
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
	s.running = &runningTurn{id: id, number: n, template: m, done: fut, reports: in.ReportEnd}
	s.assign(ctx, m.RequestID, id)
	s.watch(ctx, m, DeliveryStarted)
	return nil
}

// finished handles the end of the running turn: the senders that asked are
// told, and undelivered steers run next.
func (s *session) finished(ctx workflow.Context, res ConversationResult) {
	turnID, steers := s.running.id, res.PendingSteers
	tmpl, number, watchers, reports := s.running.template, s.running.number, s.running.watchers, s.running.reports
	s.running = nil
	res.TurnID = turnID
	tell(ctx, watchers, SignalTurnEnded, res)
	if reviewDue(tmpl.Turn.MemoryReviewEvery, number) {
		s.startReview(ctx, number, tmpl.Turn)
	}
	if syncDue(tmpl.Turn, res) && has(ctx, changeMemorySync) {
		startMemorySync(ctx, s.id, turnID, res.ActiveSessionID)
	}
	s.last = &runningTurn{id: turnID, number: number, template: tmpl, reports: reports}
	s.queue = append(steerMessages(turnID+"/steer", steers, tmpl.Turn), s.queue...)
}

// steerMessages are the steers a turn could not deliver, as the session's
// next messages; prefix names their requests. Pure.
func steerMessages(prefix string, steers []string, tmpl TurnInput) []Message {
	next := make([]Message, 0, len(steers))
	for i, text := range steers {
		next = append(next, Message{RequestID: fmt.Sprintf("%s-%d", prefix, i), Text: text, Mode: BusyQueue, Turn: tmpl})
	}
	return next
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

// waitIdle waits for a message (or an update handler's nudge) while no
// turn runs; false after sessionIdle.
func (s *session) waitIdle(ctx workflow.Context, msgs workflow.ReceiveChannel) bool {
	got := false
	tctx, cancel := workflow.WithCancel(ctx)
	idle := sessionIdle
	if s.input.Idle > 0 {
		idle = s.input.Idle
	}
	timer := workflow.NewTimer(tctx, idle)
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(msgs, func(c workflow.ReceiveChannel, _ bool) {
		var m Message
		c.Receive(ctx, &m)
		s.queue = append(s.queue, m)
		got = true
	})
	sel.AddFuture(timer, func(workflow.Future) {})
	sel.AddReceive(s.ended, func(c workflow.ReceiveChannel, _ bool) {
		var res ConversationResult
		c.Receive(ctx, &res)
		s.turnEnded(ctx, res) // steers a turn reported late run next
		got = true
	})
	sel.AddReceive(s.wake, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		got = true // an update handler changed the state: look again
	})
	sel.Select(ctx)
	cancel()
	return got
}

// settleHandlers lets update handlers finish before the coordinator ends
// or continues as new: one may queue a message. A handler whose message
// starts next waits for the main loop to start it, so the wait ends as
// soon as the queue holds a message (the loop then starts it); runs of
// older code (see changeIdleQueue) wait for every handler, as they did.
func (s *session) settleHandlers(ctx workflow.Context) error {
	if err := workflow.Await(ctx, func() bool { return len(s.queue) > 0 || workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	if workflow.AllHandlersFinished(ctx) {
		return nil
	}
	if has(ctx, changeIdleQueue) {
		return nil
	}
	return workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
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

// assign records which turn a request became. The map holds the requests
// of the last assignedKeep (see carry): its size follows the turn rate.
func (s *session) assign(ctx workflow.Context, requestID, turnID string) {
	if requestID == "" {
		return
	}
	s.assigned[requestID], s.assignedAt[requestID] = turnID, workflow.Now(ctx)
	if s.owed[requestID] {
		s.claim(requestID, turnID)
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
