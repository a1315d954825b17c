package workflows

import (
	"cmp"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// A goal's turns go through the session's coordinator (change
// goal-via-session) like any other message: the goal sends each turn's
// message (SendToSession, queued behind what the session is doing), the
// coordinator tells the goal the turn it became and how it ended (Notify,
// to the goal's workflow), and steers for the session reach the goal's
// running turn through the coordinator; the steers a goal turn could not
// deliver run next as turns of their own, before the goal's next turn.
// Goals started before keep running their turns as children.

// goalTurns runs a goal's turns through the session's coordinator.
type goalTurns struct {
	goalID, prefix string
	sessionID      string
	started, ended workflow.ReceiveChannel
}

func newGoalTurns(ctx workflow.Context, sessionID string) *goalTurns {
	id := GoalWorkflowID(sessionID)
	return &goalTurns{goalID: id, sessionID: sessionID,
		// The first run's id tells this goal's requests from those of an
		// earlier goal of the same session.
		prefix:  id + "/" + cmp.Or(workflow.GetInfo(ctx).FirstRunID, workflow.GetInfo(ctx).WorkflowExecution.RunID),
		started: workflow.GetSignalChannel(ctx, SignalTurnStarted),
		ended:   workflow.GetSignalChannel(ctx, SignalTurnEnded),
	}
}

// run hands turn's message to the coordinator and waits for the turn it
// becomes to end; running is set once it has started. With a time budget
// (bounded), a turn still running after left is interrupted, and timeUp
// says so; a goal stopped before its turn started stops that turn at once.
func (g *goalTurns) run(ctx workflow.Context, turn TurnInput, running *string, stopped *string, left time.Duration, bounded bool) (res ConversationResult, timeUp bool, err error) {
	m := Message{RequestID: fmt.Sprintf("%s/turn-%d", g.prefix, turn.TurnNumber), Text: turn.UserMessage, Mode: BusyQueue,
		Turn: turn, Notify: true, Sender: g.goalID}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumInterval: 30 * time.Second}})
	if err := workflow.ExecuteActivity(actx, SendToSessionName, SendToSessionInput{SessionID: g.sessionID, Message: m}).Get(ctx, nil); err != nil {
		return res, false, err
	}
	var d Delivery
	for d.RequestID != m.RequestID {
		g.started.Receive(ctx, &d)
	}
	*running = d.TurnID
	if *stopped != "" {
		interruptTurn(ctx, d.TurnID, *stopped)
	}
	if bounded {
		tctx, cancelTimer := workflow.WithCancel(ctx)
		defer cancelTimer()
		workflow.Go(tctx, func(c workflow.Context) {
			if workflow.NewTimer(c, left).Get(c, nil) == nil {
				timeUp = true
				interruptTurn(c, d.TurnID, "the goal's time budget (--max-hours) is spent")
			}
		})
	}
	for res.TurnID != d.TurnID || res.Late {
		g.ended.Receive(ctx, &res)
	}
	return res, timeUp, nil
}

// interruptTurn stops a running turn (one that has ended ignores it).
func interruptTurn(ctx workflow.Context, turnID, reason string) {
	_ = workflow.SignalExternalWorkflow(ctx, turnID, "", SignalInterrupt, reason).Get(ctx, nil)
}
