package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// ErrNoGoal: no run (task or goal) was started in the session.
var ErrNoGoal = errors.New("no run in this session")

// ErrSessionInUse: a goal needs a session of its own.
var ErrSessionInUse = errors.New("the session already has a conversation; a goal runs in a session of its own")

// StartGoal starts pursuing in.Goal in session in.SessionID, which must be
// new. It returns at once; WaitGoal follows it.
// ChatGoalBudget bounds a goal started from a chat or an editor: 500 model
// calls and 8 hours.
var ChatGoalBudget = workflows.GoalBudget{MaxIterations: 500, MaxDuration: 8 * time.Hour}

func (rt *Runtime) StartGoal(ctx context.Context, in workflows.GoalInput) error {
	if _, err := rt.Store.Session(ctx, in.SessionID); err == nil {
		return fmt.Errorf("%w: %s", ErrSessionInUse, in.SessionID)
	} else if !errors.Is(err, models.ErrNotFound) {
		return err
	}
	_, err := rt.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: workflows.GoalWorkflowID(in.SessionID), TaskQueue: workflows.TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
	}, workflows.GoalWorkflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return fmt.Errorf("%w: %s", ErrSessionInUse, in.SessionID)
	}
	if err != nil {
		return fmt.Errorf("start goal in %s: %w", in.SessionID, err)
	}
	return nil
}

// GoalProgress is where the session's goal stands.
func (rt *Runtime) GoalProgress(ctx context.Context, sessionID string) (workflows.GoalProgress, error) {
	var p workflows.GoalProgress
	v, err := rt.Client.QueryWorkflow(ctx, workflows.GoalWorkflowID(sessionID), "", workflows.QueryGoal)
	if err != nil {
		return p, fmt.Errorf("query goal %s: %w", sessionID, err)
	}
	if err := v.Get(&p); err != nil {
		return p, fmt.Errorf("decode goal %s progress: %w", sessionID, err)
	}
	return p, nil
}

// WaitGoal waits for the session's goal to end, riding out server
// restarts; each turn that ends meanwhile is handed to onTurn once.
func (rt *Runtime) WaitGoal(ctx context.Context, sessionID string, onTurn func(workflows.GoalTurn)) (workflows.GoalResult, error) {
	ctx, unwatch := rt.watchServer(ctx)
	defer unwatch()
	seen := 0
	report := func(p workflows.GoalProgress) {
		var ended []workflows.GoalTurn
		ended, seen = turnsEnded(p, seen)
		for _, t := range ended {
			if onTurn != nil {
				onTurn(t)
			}
		}
	}
	id := workflows.GoalWorkflowID(sessionID)
	got := make(chan error, 1)
	var res workflows.GoalResult
	go func() {
		for {
			err := rt.Client.GetWorkflow(ctx, id, "").Get(ctx, &res)
			if err == nil || ctx.Err() != nil || isFinal(err) {
				got <- err
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-got:
			var notFound *serviceerror.NotFound
			if errors.As(err, &notFound) {
				return res, fmt.Errorf("%w: %s", ErrNoGoal, sessionID)
			}
			if err != nil {
				return res, fmt.Errorf("goal %s: %w", sessionID, err)
			}
			report(res.GoalProgress)
			return res, nil
		case <-tick.C:
			if p, err := rt.GoalProgress(ctx, sessionID); err == nil {
				report(p)
			}
		}
	}
}

// interruptGoal stops the session's goal, if one runs there.
func (rt *Runtime) interruptGoal(ctx context.Context, sessionID, reason string) (string, error) {
	id := workflows.GoalWorkflowID(sessionID)
	desc, err := rt.Client.DescribeWorkflowExecution(ctx, id, "")
	if err != nil || desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return "", ErrNoRunningTurn
	}
	if err := rt.Client.SignalWorkflow(ctx, id, "", workflows.SignalInterrupt, reason); err != nil {
		return "", fmt.Errorf("interrupt %s: %w", id, err)
	}
	return id, nil
}

// WaitStarted waits until the workflow id exists (a run's child turn
// starts a moment after its run), within timeout.
func (rt *Runtime) WaitStarted(ctx context.Context, id string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := rt.Client.DescribeWorkflowExecution(ctx, id, "")
		var notFound *serviceerror.NotFound
		switch {
		case err == nil:
			return nil
		case !errors.As(err, &notFound):
			return fmt.Errorf("wait for %s: %w", id, err)
		case time.Now().After(deadline):
			return fmt.Errorf("wait for %s: not started within %s", id, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// turnsEnded are the turns of p numbered after seen, in order, and the
// number of the last one (seen when there is none). Every kept turn not yet
// reported is: between a turn's end and its check TurnCount counts the turn
// while Turns do not hold it yet, so TurnCount says nothing of which turns
// were dropped. Pure.
func turnsEnded(p workflows.GoalProgress, seen int) ([]workflows.GoalTurn, int) {
	var out []workflows.GoalTurn
	for _, t := range p.Turns {
		if t.Number > seen {
			out = append(out, t)
			seen = t.Number
		}
	}
	return out, seen
}
