package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Steering a goal. A goal's turns run under the goal, not under the
// session's coordinator, so a steer for a session with a goal running goes
// to the goal (UpdateGoalSteer). The update answers once the steer has a
// place: the running turn took the signal (it delivers the text at its
// next safe point, or hands it back when it ends first), or the goal's
// next turn starts with it, or, when the goal ends first, the session's
// coordinator holds it as the next message (HandedOn names its request).
// Nothing acknowledged is dropped: steers a turn hands back go to the next
// turn, and those left when the goal ends are handed on.
const (
	// UpdateGoalSteer takes a steer's text and returns a GoalSteered.
	UpdateGoalSteer = "goal-steer"
	// SendToSessionName is the activity that delivers a message to a
	// session's coordinator (durable once it returns).
	SendToSessionName = "SendToSession"
)

// GoalSteered is where a goal put a steer.
type GoalSteered struct {
	// TurnID is the goal's turn that takes the text.
	TurnID string `json:"turn_id,omitempty"`
	// HandedOn is the request id of the session message the text became
	// (the goal ended first); the sender asks the coordinator for its turn.
	HandedOn string `json:"handed_on,omitempty"`
}

// SendToSessionInput is a message for a session's coordinator.
type SendToSessionInput struct {
	SessionID string
	Message   Message
}

// GoalEndingType is the application error type with which a goal that is
// ending refuses a steer: the sender hands it to the session instead.
const GoalEndingType = "GoalEnding"

// goalSteers are the steers a goal holds for its next turn and where each
// of those already placed went (by arrival number).
type goalSteers struct {
	pending []heldSteer
	placed  map[int]GoalSteered
	next    int
	// closed: the goal is ending; new steers are refused.
	closed bool
	// viaSession: the goal's turns run under the session's coordinator
	// (changeGoalViaSession), which takes the steers; the goal refuses
	// them, so that the sender hands them to the coordinator.
	viaSession bool
}

// heldSteer is a steer waiting for the goal's next turn; seq is its
// arrival number, or -1 for one a turn handed back (its sender was
// already answered).
type heldSteer struct {
	seq  int
	text string
}

func newGoalSteers() *goalSteers { return &goalSteers{placed: map[int]GoalSteered{}} }

// listen installs UpdateGoalSteer. running says which turn runs now ("")
// and current is its future.
func (g *goalSteers) listen(ctx workflow.Context, running func() (string, workflow.ChildWorkflowFuture)) error {
	root := ctx
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateGoalSteer, func(ctx workflow.Context, text string) (GoalSteered, error) {
		ctx = inheritEpoch(root, ctx)
		if id, turn := running(); turn != nil {
			if turn.SignalChildWorkflow(ctx, SignalSteer, text).Get(ctx, nil) == nil {
				return GoalSteered{TurnID: id}, nil
			}
		}
		seq := g.next
		g.next++
		g.pending = append(g.pending, heldSteer{seq: seq, text: text})
		if err := workflow.Await(ctx, func() bool { _, ok := g.placed[seq]; return ok }); err != nil {
			return GoalSteered{}, err
		}
		at := g.placed[seq]
		delete(g.placed, seq)
		if at == (GoalSteered{}) {
			return at, errors.New("the goal ended and could not hand the steer to its session")
		}
		return at, nil
	}, workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, text string) error {
		switch {
		case strings.TrimSpace(text) == "":
			return errors.New("the steer is empty")
		case payloadSize(text) > maxMessagePayload/2:
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("a steer of %d bytes as sent: at most %d", payloadSize(text), maxMessagePayload/2), ErrTypeMessageTooLarge, nil)
		case g.closed:
			return temporal.NewNonRetryableApplicationError("the goal is ending", GoalEndingType, nil)
		case g.viaSession:
			return temporal.NewNonRetryableApplicationError("the session's coordinator takes the steers", GoalEndingType, nil)
		}
		return nil
	}})
}

// handBack keeps the steers a finished turn could not deliver, before
// those that arrived since (they came first).
func (g *goalSteers) handBack(texts []string) {
	back := make([]heldSteer, 0, len(texts)+len(g.pending))
	for _, t := range texts {
		back = append(back, heldSteer{seq: -1, text: t})
	}
	g.pending = append(back, g.pending...)
}

// take empties the held steers for the turn turnID: their senders are
// answered with it.
func (g *goalSteers) take(turnID string) []string {
	out := make([]string, 0, len(g.pending))
	for _, s := range g.pending {
		out = append(out, s.text)
		if s.seq >= 0 {
			g.placed[s.seq] = GoalSteered{TurnID: turnID}
		}
	}
	g.pending = nil
	return out
}

// handOn delivers the steers left when the goal ends to the session's
// coordinator, as its next messages (queued), and answers their senders
// with the requests they became. New steers are refused from here on;
// every handler is let finish first.
func (g *goalSteers) handOn(ctx workflow.Context, in GoalInput, round int) {
	g.closed = true
	for i := 0; ; i++ {
		yieldToHandlers(ctx)
		if len(g.pending) == 0 {
			_ = workflow.Await(ctx, func() bool { return len(g.pending) > 0 || workflow.AllHandlersFinished(ctx) })
			if len(g.pending) == 0 {
				return
			}
		}
		if !has(ctx, changeGoalSteers) {
			return
		}
		held := g.pending
		g.pending = nil
		for j, s := range held {
			m := Message{RequestID: fmt.Sprintf("%s/steer-%d-%d-%d", GoalWorkflowID(in.SessionID), round, i, j), Text: s.text, Mode: BusyQueue, Turn: in.Turn}
			m.Turn.SessionID, m.Turn.UserMessage = in.SessionID, s.text
			opts := workflow.ActivityOptions{StartToCloseTimeout: time.Minute, RetryPolicy: &temporal.RetryPolicy{MaximumInterval: 30 * time.Second}}
			// Retried until it succeeds: only a cancelled goal fails it,
			// and its sender is then told the steer went nowhere.
			err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), SendToSessionName, SendToSessionInput{SessionID: in.SessionID, Message: m}).Get(ctx, nil)
			if s.seq >= 0 && err == nil {
				g.placed[s.seq] = GoalSteered{HandedOn: m.RequestID}
			} else if s.seq >= 0 {
				g.placed[s.seq] = GoalSteered{}
			}
		}
	}
}
