package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	turnacts "github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/textline"
	"github.com/talaria-agent/talaria/workflows"
)

// chatActivities are the gateway's side of ChatMessageWorkflow.
type chatActivities struct {
	g *Gateway
	// rate spaces the drafts' sends and edits in each chat.
	rate chatRate
	// follows are the follows running in this process, by message
	// (followKey): the reply stops its message's follow before it edits the
	// draft, at once, rather than wait for a cancellation to reach it.
	follows sync.Map
}

// runningFollow is a follow the reply can stop and wait for.
type runningFollow struct {
	stop context.CancelFunc
	done chan struct{}
}

// followKey names a chat message's follow. Pure.
func followKey(platform, account, chatID, messageID string) string {
	return platform + "/" + account + "/" + chatID + "/" + messageID
}

// stopFollow stops this process's follow of the message, if one runs,
// and waits (briefly) until it has stopped: no draft edit lands after it.
func (a *chatActivities) stopFollow(key string) {
	v, ok := a.follows.Load(key)
	if !ok {
		return
	}
	f := v.(*runningFollow)
	f.stop()
	select {
	case <-f.done:
	case <-time.After(15 * time.Second):
	}
}

func (a *chatActivities) register(w worker.ActivityRegistry) {
	w.RegisterActivityWithOptions(a.handoff, activity.RegisterOptions{Name: workflows.ChatHandoffName})
	w.RegisterActivityWithOptions(a.awaitTurn, activity.RegisterOptions{Name: workflows.ChatAwaitTurnName})
	w.RegisterActivityWithOptions(a.reply, activity.RegisterOptions{Name: workflows.ChatReplyName})
	w.RegisterActivityWithOptions(a.submit, activity.RegisterOptions{Name: workflows.ChatSubmitName})
	w.RegisterActivityWithOptions(a.followSegment, activity.RegisterOptions{Name: workflows.ChatFollowName})
}

// submit hands the message to its session (once, by the request id the
// workflow gave it); the coordinator then signals the workflow.
func (a *chatActivities) submit(ctx context.Context, in workflows.ChatMessageInput) error {
	if err := a.g.rt.Submit(ctx, in.Message); err != nil {
		return fmt.Errorf("hand the chat message over: %w", err)
	}
	return nil
}

// followMargin is how long before its deadline a follow segment ends.
const followMargin = time.Minute

// followSegment shows the turn in the chat (typing, the draft reply)
// until it has shown the turn's end (done), the workflow cancels it, or
// the segment nears its deadline: then it returns not done, and the
// workflow starts the next segment, which finds the draft this one sent.
func (a *chatActivities) followSegment(ctx context.Context, in workflows.ChatMessageInput, turn workflows.ChatTurn) (done bool, err error) {
	ctx, stop := heartbeat(ctx)
	defer stop()
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-followMargin))
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	key, f := followKey(in.Platform, in.Account, in.ChatID, in.MessageID), &runningFollow{stop: cancel, done: make(chan struct{})}
	a.follows.Store(key, f)
	defer func() { a.follows.CompareAndDelete(key, f); close(f.done) }()
	if a.showTurn(ctx, in, turn.TurnID) {
		return true, nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return false, nil
	}
	return false, ctx.Err()
}

// showTurn shows the bot as typing and follows the turn's events (its
// draft reply, what it waits for) until the turn is done (true) or ctx
// ends.
func (a *chatActivities) showTurn(ctx context.Context, in workflows.ChatMessageInput, turnID string) bool {
	stopTyping := a.typing(ctx, in)
	defer stopTyping()
	a.follow(ctx, in, turnID)
	return ctx.Err() == nil
}

// typing shows the bot as typing in the message's chat until stopped.
func (a *chatActivities) typing(ctx context.Context, in workflows.ChatMessageInput) (stop func()) {
	p := a.g.platform(in.Platform)
	tctx, cancel := context.WithCancel(ctx)
	if p != nil {
		go func() {
			for tctx.Err() == nil {
				_ = p.Typing(tctx, in.ChatID)
				sleep(tctx, 4*time.Second)
			}
		}()
	}
	return cancel
}

// heartbeat keeps the activity's attempt alive (activities.KeepAlive,
// every few seconds) and returns the context to work in and its stop.
func heartbeat(ctx context.Context) (context.Context, func()) {
	return turnacts.KeepAlive(ctx, 5*time.Second, nil, nil)
}

// handoff delivers the message to its session (once, by the request id
// the workflow gave it) and returns the turn it became, waiting while it
// is queued.
func (a *chatActivities) handoff(ctx context.Context, in workflows.ChatMessageInput) (workflows.ChatTurn, error) {
	ctx, stop := heartbeat(ctx)
	defer stop()
	turnID, err := a.g.rt.Deliver(ctx, in.Message)
	if err != nil {
		return workflows.ChatTurn{}, fmt.Errorf("hand the chat message over: %w", err)
	}
	return workflows.ChatTurn{TurnID: turnID}, nil
}

// awaitTurn waits for the turn's result, showing the bot as typing and
// following the turn's events (follow: its draft reply, what it waits
// for). ChatMessageWorkflow runs it only for messages that arrived before
// changeTurnEndSignal; newer ones wait for signals (submit, followSegment).
func (a *chatActivities) awaitTurn(ctx context.Context, in workflows.ChatMessageInput, turn workflows.ChatTurn) (workflows.ChatTurnResult, error) {
	ctx, stop := heartbeat(ctx)
	defer stop()
	defer a.typing(ctx, in)()
	fctx, stopFollow := context.WithCancel(ctx)
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		a.follow(fctx, in, turn.TurnID)
	}()
	defer func() {
		// The reply edits the draft: no draft edit may land after it.
		stopFollow()
		select {
		case <-followed:
		case <-time.After(15 * time.Second):
		}
	}()
	res, err := a.g.rt.WaitTurn(ctx, turn.TurnID)
	if err != nil {
		var missing *serviceerror.NotFound
		if errors.As(err, &missing) {
			return workflows.ChatTurnResult{Error: "the turn is gone"}, nil
		}
		if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
			return workflows.ChatTurnResult{StopReason: workflows.StopError, Error: textline.Of(err.Error(), 300)}, nil
		}
		return workflows.ChatTurnResult{}, err
	}
	return workflows.ChatTurnResult{FinalMessageID: res.FinalMessageID, StopReason: res.TurnExitReason, Completed: res.Completed}, nil
}

// reply sends the turn's answer to the chat, every part in order, each
// once: a part recorded as sent is not sent again by a retry, so a retry
// after a crash between two parts sends only those not sent yet. When the
// turn has a draft message (follow), the first part is edited into it
// instead of sent; the other parts follow it as messages of their own.
func (a *chatActivities) reply(ctx context.Context, in workflows.ChatReplyInput) error {
	if activity.IsActivity(ctx) {
		var stop func()
		ctx, stop = heartbeat(ctx)
		defer stop()
	}
	p := a.g.platform(in.Platform)
	if p == nil {
		// Not connected here (yet): another gateway process, or this one
		// once the platform answers, takes the retry.
		return temporal.NewApplicationError("no platform "+in.Platform+" connected in this gateway process", "NoPlatform")
	}
	a.stopFollow(followKey(in.Platform, in.Account, in.ChatID, in.ReplyTo))
	text, err := a.replyText(ctx, in)
	if err != nil {
		return err
	}
	draftID, drafted, err := a.draftOf(ctx, in)
	if err != nil {
		return err
	}
	if text == "" {
		if !drafted {
			return nil
		}
		text = "(stopped)" // an interrupted turn whose draft showed something
	}
	for i, part := range p.Parts(text) {
		key := partKey(in, i)
		if i == 0 && drafted {
			done, err := a.editDraft(ctx, p, in, key, draftID, part)
			if err != nil {
				return err
			}
			if done {
				continue
			}
			// The draft is gone: the part is sent anew.
		}
		out := Outgoing{ChatID: in.ChatID}
		var pace func()
		if i == 0 {
			out.ReplyTo = in.ReplyTo
		} else {
			// The parts follow each other at the chat's pace.
			pace = func() { a.rate.wait(ctx, in.ChatID) }
		}
		if _, _, err := a.sendOnce(ctx, p, key, out, part, pace); err != nil {
			return fmt.Errorf("send part %d of the reply: %w", i+1, err)
		}
	}
	return nil
}

// partKey is the outbox key of part i of a turn's reply. Pure.
func partKey(in workflows.ChatReplyInput, i int) string {
	return fmt.Sprintf("%s/%s/%s/part/%d", in.Platform, in.Account, in.TurnID, i)
}

// editDraft makes the turn's draft message the reply's first part, once
// (recorded under key). done is false when the draft can no longer be
// edited.
func (a *chatActivities) editDraft(ctx context.Context, p Platform, in workflows.ChatReplyInput, key, draftID, part string) (done bool, err error) {
	st := a.g.rt.Store
	if _, sent, err := st.Sent(ctx, key); err != nil || sent {
		return true, err
	}
	a.rate.wait(ctx, in.ChatID)
	switch err := p.Edit(ctx, in.ChatID, draftID, part, nil); {
	case errors.Is(err, ErrNotEditable):
		return false, nil
	case err != nil:
		return true, err
	}
	return true, st.RecordSent(ctx, key, draftID)
}

// replyText is what the chat is told: the final answer, or why there is
// none.
func (a *chatActivities) replyText(ctx context.Context, in workflows.ChatReplyInput) (string, error) {
	r := in.Result
	text := ""
	if r.FinalMessageID != 0 {
		m, err := a.g.rt.Store.Message(ctx, r.FinalMessageID)
		if err != nil {
			return "", fmt.Errorf("load the answer: %w", err)
		}
		text = turnacts.FinalText(m)
	}
	switch {
	case r.StopReason == workflows.StopInterrupted && text == "":
		return "", nil // /stop says so; a message that interrupted it is answered itself
	case r.StopReason == workflows.StopInterrupted:
		return text + "\n\n(stopped)", nil
	case text == "" && r.Error != "":
		return "The turn failed: " + r.Error, nil
	case text == "":
		return fmt.Sprintf("The turn ended without an answer (%s).", r.StopReason), nil
	}
	return text, nil
}
