package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// chatFollowLimit bounds one ChatFollow attempt: the activity ends its
// segment a little before (it returns not done, and the workflow starts
// the next one), so no activity outlives the model-call limit however
// long the turn runs.
const chatFollowLimit = 15 * time.Minute

// chatBySignals carries a chat message to its reply without an activity
// that waits (changeTurnEndSignal): ChatSubmit hands the message over
// (Message.Notify), the coordinator signals the turn it became
// (SignalTurnStarted) and how that turn ended (SignalTurnEnded), and
// ChatFollow shows the turn in the chat meanwhile. At the turn's end the
// follow is cancelled and the reply sent.
func chatBySignals(ctx workflow.Context, in ChatMessageInput) error {
	in.Message.Notify = true
	// The reply does not wait for the cancelled follow: a cancellation
	// reaches an activity only with its next heartbeat, seconds later; the
	// reply stops the follow of its message itself (in the gateway's
	// process), before it edits the draft.
	followEnds := has(ctx, changeFollowEnds)
	started := workflow.GetSignalChannel(ctx, SignalTurnStarted)
	ended := workflow.GetSignalChannel(ctx, SignalTurnEnded)
	submit := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	if err := workflow.ExecuteActivity(submit, ChatSubmitName, in).Get(ctx, nil); err != nil {
		return err
	}
	var d Delivery
	started.Receive(ctx, &d)
	turn := ChatTurn{TurnID: d.TurnID}

	fctx, stopFollow := workflow.WithCancel(ctx)
	fctx = workflow.WithActivityOptions(fctx, workflow.ActivityOptions{
		StartToCloseTimeout: chatFollowLimit,
		HeartbeatTimeout:    30 * time.Second,
		WaitForCancellation: true,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 10},
	})
	follow := workflow.ExecuteActivity(fctx, ChatFollowName, in, turn)
	var res ConversationResult
	gotEnd := false
	for !gotEnd {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(ended, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, &res)
			gotEnd = res.TurnID == turn.TurnID
		})
		if follow != nil {
			sel.AddFuture(follow, func(f workflow.Future) {
				follow = nil
				var done bool
				if f.Get(ctx, &done) == nil && !done { // the segment ended: follow on
					follow = workflow.ExecuteActivity(fctx, ChatFollowName, in, turn)
				}
			})
		}
		sel.Select(ctx)
	}
	stopFollow()
	if follow != nil && !followEnds {
		_ = follow.Get(ctx, nil)
	}
	return chatReply(ctx, in, turn, chatResult(res))
}

// chatResult is what the reply needs of a turn's result. Pure.
func chatResult(res ConversationResult) ChatTurnResult {
	out := ChatTurnResult{FinalMessageID: res.FinalMessageID, StopReason: res.TurnExitReason, Completed: res.Completed}
	if res.Error != nil && res.Failed {
		out.Error = turnapi.BoundError(*res.Error)
	}
	return out
}
