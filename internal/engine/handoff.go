package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/talaria-agent/talaria/workflows"
)

// ErrUnknownRequest means the session's coordinator does not know the
// message a sender waits for (it ended, or the message's turn started too
// long ago for it to remember).
var ErrUnknownRequest = errors.New("the session does not know this message")

// ErrWithdrawn means the message was withdrawn (Withdraw) before it ran.
var ErrWithdrawn = errors.New("the message was withdrawn")

// ErrMessageTooLarge means the session refused a message longer than
// workflows.MaxMessageBytes; nothing was recorded.
var ErrMessageTooLarge = errors.New("the message is too long")

// ErrQueueFull means the session refused a message because the messages
// waiting in it already hold its queue's share; nothing was recorded,
// and the same message may be sent again once they have run.
var ErrQueueFull = errors.New("the session's queue is full")

// RefusedError is a message the session refused for its size: Kind is
// ErrMessageTooLarge or ErrQueueFull, Why the session's own words.
type RefusedError struct {
	Kind error
	Why  string
}

func (e *RefusedError) Error() string { return e.Kind.Error() + ": " + e.Why }
func (e *RefusedError) Unwrap() error { return e.Kind }

// refusal is err as a *RefusedError when the session refused the message
// for its size.
func refusal(err error) error {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		switch app.Type() {
		case workflows.ErrTypeMessageTooLarge:
			return &RefusedError{Kind: ErrMessageTooLarge, Why: app.Message()}
		case workflows.ErrTypeQueueFull:
			return &RefusedError{Kind: ErrQueueFull, Why: app.Message()}
		}
	}
	return err
}

// handoffRetry is how long a sender waits before it tries a handoff again
// after Temporal did not answer.
const handoffRetry = time.Second

// deliver hands msg to the coordinator of a conversation (a resolved id)
// with Update-with-Start: the coordinator is started when none runs, and
// the message is durable once the update is accepted. stage says what to
// wait for: accepted (the Delivery is then empty) or completed (the
// message's turn, or its place in the queue). While Temporal does not
// answer it tries again until ctx ends; the update's id (from the request
// id) and the coordinator make a retry take the message once.
func (rt *Runtime) deliver(ctx context.Context, sessionID string, msg workflows.Message, stage client.WorkflowUpdateStage) (workflows.Delivery, error) {
	if msg.RequestID == "" {
		msg.RequestID = NewRequestID()
	}
	if msg.Mode == workflows.BusySteer {
		if d, ok, err := rt.steerGoal(ctx, sessionID, msg); ok {
			return d, err
		}
	}
	id := workflows.SessionWorkflowID(sessionID)
	for {
		var d workflows.Delivery
		start := rt.Client.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
			ID:                       id,
			TaskQueue:                workflows.TaskQueue,
			WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		}, workflows.SessionWorkflowName, workflows.SessionInput{SessionID: sessionID})
		h, err := rt.Client.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
			StartWorkflowOperation: start,
			UpdateOptions: client.UpdateWorkflowOptions{
				UpdateID:     updateID(workflows.UpdateDeliver, msg.RequestID),
				UpdateName:   workflows.UpdateDeliver,
				Args:         []any{msg},
				WaitForStage: stage,
			},
		})
		if err == nil && stage == client.WorkflowUpdateStageCompleted {
			err = h.Get(ctx, &d)
		}
		if err == nil {
			return d, nil
		}
		if !retryHandoff(ctx, err, true) {
			return d, fmt.Errorf("send to session %s: %w", sessionID, refusal(err))
		}
		rt.logger.Debug("sending to the session: temporal did not take it, retrying", "session", sessionID, "error", err)
		if err := sleepCtx(ctx, handoffRetry); err != nil {
			return d, fmt.Errorf("send to session %s: %w", sessionID, err)
		}
	}
}

// handoff delivers msg and returns the turn it became (for a steer: the
// running turn it joined, Outcome steered), waiting while it is queued.
func (rt *Runtime) handoff(ctx context.Context, sessionID string, msg workflows.Message) (workflows.Delivery, error) {
	d, err := rt.deliver(ctx, sessionID, msg, client.WorkflowUpdateStageCompleted)
	switch {
	case err != nil || d.TurnID != "":
		return d, err
	case d.Outcome == workflows.DeliveryWithdrawn:
		return d, fmt.Errorf("session %s, request %s: %w", sessionID, msg.RequestID, ErrWithdrawn)
	}
	if d.RequestID != "" {
		msg.RequestID = d.RequestID // a goal handed the steer on as this message
	}
	turnID, err := rt.waitAssigned(ctx, sessionID, msg.RequestID)
	return workflows.Delivery{RequestID: msg.RequestID, Outcome: workflows.DeliveryStarted, TurnID: turnID}, err
}

// Withdraw withdraws a message its sender hands over (StartRequest) and
// that has not started a turn yet: taken out of its session's queue, or
// refused should it arrive later; it will not run, and its sender's
// StartRequest ends with ErrWithdrawn. The Delivery says what became of
// it: withdrawn, or the turn it started (too late: stop that turn) or
// steered (another sender's turn).
func (rt *Runtime) Withdraw(ctx context.Context, sessionID, requestID string) (workflows.Delivery, error) {
	var d workflows.Delivery
	conversation, err := rt.Conversation(ctx, sessionID)
	if err != nil {
		return d, err
	}
	h, err := rt.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflows.SessionWorkflowID(conversation),
		UpdateID:     updateID(workflows.UpdateWithdraw, requestID),
		UpdateName:   workflows.UpdateWithdraw,
		Args:         []any{requestID},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, &d)
	}
	if err != nil {
		return d, fmt.Errorf("withdraw request %s from session %s: %w", requestID, conversation, err)
	}
	return d, nil
}

// waitAssigned waits until the coordinator of a conversation (a resolved
// id) has started the turn a request became (it may wait in the queue
// first): one update (UpdateAwaitTurn) the coordinator answers when the
// turn starts, asked again only when the coordinator continued as new
// meanwhile or Temporal did not answer.
func (rt *Runtime) waitAssigned(ctx context.Context, sessionID, requestID string) (string, error) {
	for {
		var d workflows.Delivery
		h, err := rt.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
			WorkflowID:   workflows.SessionWorkflowID(sessionID),
			UpdateName:   workflows.UpdateAwaitTurn,
			Args:         []any{requestID},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		})
		if err == nil {
			err = h.Get(ctx, &d)
		}
		switch {
		case err == nil && d.TurnID != "":
			return d.TurnID, nil
		case err == nil && d.Outcome == workflows.DeliveryWithdrawn:
			return "", fmt.Errorf("session %s, request %s: %w", sessionID, requestID, ErrWithdrawn)
		case err == nil && d.Outcome == workflows.DeliveryQueued:
			continue // the coordinator continued as new: ask its next run
		case err == nil:
			return "", fmt.Errorf("session %s, request %s: %w", sessionID, requestID, ErrUnknownRequest)
		case !retryHandoff(ctx, err, false):
			var notFound *serviceerror.NotFound
			if errors.As(err, &notFound) {
				err = ErrUnknownRequest // the coordinator ended: nothing waits
			}
			return "", fmt.Errorf("wait for the turn of request %s in session %s: %w", requestID, sessionID, err)
		}
		rt.logger.Debug("waiting for the session coordinator; temporal did not answer, retrying", "session", sessionID, "error", err)
		if err := sleepCtx(ctx, handoffRetry); err != nil {
			return "", fmt.Errorf("wait for the turn of request %s in session %s: %w", requestID, sessionID, err)
		}
	}
}

// retryHandoff tells a handoff failure worth another try (Temporal away,
// the coordinator between two runs or just ended) from a final one (the
// message refused, ctx ended, a request Temporal refuses as such).
// starts: the retry may start a new coordinator, so a coordinator that
// ended is worth another try.
func retryHandoff(ctx context.Context, err error, starts bool) bool {
	if ctx.Err() != nil {
		return false
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		// Accepted by a coordinator that was then terminated or failed.
		return starts && app.Type() == "AcceptedUpdateCompletedWorkflow"
	}
	var (
		notFound   *serviceerror.NotFound
		invalid    *serviceerror.InvalidArgument
		denied     *serviceerror.PermissionDenied
		nsNotFound *serviceerror.NamespaceNotFound
		canceled   *temporal.CanceledError
	)
	switch {
	case errors.As(err, &notFound):
		return starts
	case errors.As(err, &invalid), errors.As(err, &denied), errors.As(err, &nsNotFound), errors.As(err, &canceled):
		return false
	}
	return true
}

// maxUpdateID keeps update ids short; a longer request id is digested.
const maxUpdateID = 200

// updateID is the id of an update about a request: the same request gets
// the same id, so Temporal takes a retried update once per run. Pure.
func updateID(name, requestID string) string {
	id := name + "/" + requestID
	if len(id) <= maxUpdateID {
		return id
	}
	sum := sha256.Sum256([]byte(requestID))
	return name + "/sha256:" + hex.EncodeToString(sum[:])
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// registerSessionActivities registers what the session coordinator needs
// of the worker beside the turn's activities: AwaitTurn.
func (rt *Runtime) registerSessionActivities(w worker.Worker) {
	w.RegisterActivityWithOptions(rt.awaitTurn, activity.RegisterOptions{Name: workflows.AwaitTurnName})
	rt.registerGoalActivities(w)
}

// awaitHeartbeat is how often AwaitTurn heartbeats (its heartbeat timeout
// is 30 s).
const awaitHeartbeat = 5 * time.Second

// awaitTurn is the AwaitTurn activity: it waits for the end of a turn a
// coordinator run took over from the run before it (see
// workflows/session_continue.go) and reports the steers the turn could not
// deliver. A turn that failed, was terminated or is unknown to Temporal has
// ended without any. It heartbeats, so a dead worker's wait moves on.
func (rt *Runtime) awaitTurn(ctx context.Context, turnID string) (workflows.TurnEnd, error) {
	end := workflows.TurnEnd{TurnID: turnID}
	beat, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		t := time.NewTicker(awaitHeartbeat)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(beat)
			select {
			case <-beat.Done():
				return
			case <-t.C:
			}
		}
	}()
	for {
		var res workflows.ConversationResult
		err := rt.Client.GetWorkflow(ctx, turnID, "").Get(ctx, &res)
		if err == nil {
			end.PendingSteers = res.PendingSteers
			return end, nil
		}
		if ctx.Err() != nil {
			return end, ctx.Err()
		}
		if isFinal(err) {
			return end, nil
		}
		rt.logger.Debug("waiting for a turn; temporal did not answer, retrying", "turn", turnID, "error", err)
		if err := sleepCtx(ctx, handoffRetry); err != nil {
			return end, err
		}
	}
}
