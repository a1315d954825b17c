package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/transcript"
	"github.com/talaria-agent/talaria/workflows"
)

// RunTurn starts the next turn of in.SessionID (numbering it in the store),
// waits for its result and fills the session's messages from the store.
// While the Temporal server is unreachable (e.g. a restarting serve) it keeps
// waiting until ctx ends: the turn itself is durable.
func (rt *Runtime) RunTurn(ctx context.Context, in workflows.TurnInput) (workflows.ConversationResult, error) {
	var res workflows.ConversationResult
	n, err := rt.Store.NextTurn(ctx, in.SessionID, in.Model)
	if err != nil {
		return res, fmt.Errorf("number the turn: %w", err)
	}
	in.TurnNumber = n
	id := workflows.TurnWorkflowID(in.SessionID, n)
	_, err = rt.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, workflows.TurnWorkflowName, in)
	if err != nil {
		return res, fmt.Errorf("start turn %s: %w", id, err)
	}
	if res, err = rt.WaitTurn(ctx, id); err != nil {
		return res, err
	}
	return res, rt.FillMessages(ctx, &res)
}

// WaitTurn waits for a turn's result, riding out server restarts.
func (rt *Runtime) WaitTurn(ctx context.Context, workflowID string) (workflows.ConversationResult, error) {
	for {
		var res workflows.ConversationResult
		err := rt.Client.GetWorkflow(ctx, workflowID, "").Get(ctx, &res)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if isFinal(err) {
			return res, fmt.Errorf("turn %s: %w", workflowID, err)
		}
		rt.logger.Warn("waiting for the turn; temporal not reachable, retrying", "turn", workflowID, "error", err)
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// isFinal tells a failed workflow from a transient connection problem.
func isFinal(err error) bool {
	var wfErr *temporal.WorkflowExecutionError
	var canceled *temporal.CanceledError
	var timeout *temporal.TimeoutError
	var terminated *temporal.TerminatedError
	var notFound *serviceerror.NotFound
	return errors.As(err, &notFound) || errors.As(err, &wfErr) || errors.As(err, &canceled) || errors.As(err, &timeout) || errors.As(err, &terminated)
}

// FillMessages loads the session's messages in OpenAI format into res.
func (rt *Runtime) FillMessages(ctx context.Context, res *workflows.ConversationResult) error {
	msgs, err := rt.Store.Messages(ctx, res.SessionID)
	if err != nil {
		return fmt.Errorf("load messages of session %s: %w", res.SessionID, err)
	}
	res.Messages = transcript.ToOpenAI(msgs)
	return nil
}
