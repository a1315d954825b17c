package engine

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// ErrTurnRunning means the session has a turn running or messages
// waiting: a compaction between turns waits until it is idle.
var ErrTurnRunning = errors.New("a turn is running in this session")

// ErrNoConversation means the session holds no conversation yet.
var ErrNoConversation = errors.New("the session has no conversation yet")

// CompactionOf prepares a compaction of the session between turns, with
// the turn template t: the newest session of its lineage is the one
// compacted. ErrTurnRunning while the session is busy, ErrNoConversation
// when the store does not know it.
func (rt *Runtime) CompactionOf(ctx context.Context, sessionID string, t workflows.TurnInput) (workflows.CompactSessionInput, error) {
	st, err := rt.SessionState(ctx, sessionID)
	var missing *serviceerror.NotFound
	switch {
	case err != nil && !errors.As(err, &missing):
		return workflows.CompactSessionInput{}, err
	case st.Running != "" || len(st.Queued) > 0:
		return workflows.CompactSessionInput{}, ErrTurnRunning
	}
	tip, err := rt.Store.Tip(ctx, sessionID)
	if errors.Is(err, models.ErrNotFound) {
		return workflows.CompactSessionInput{}, ErrNoConversation
	}
	if err != nil {
		return workflows.CompactSessionInput{}, fmt.Errorf("compact session %s: %w", sessionID, err)
	}
	return workflows.CompactSessionInput{SessionID: tip, Turn: t}, nil
}

// Compact compacts the session's conversation now and waits for it (see
// CompactionOf for when it refuses).
func (rt *Runtime) Compact(ctx context.Context, sessionID string, t workflows.TurnInput) (turnapi.CompressContextResult, error) {
	in, err := rt.CompactionOf(ctx, sessionID, t)
	if err != nil {
		return turnapi.CompressContextResult{}, err
	}
	run, err := rt.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: "compact/" + in.SessionID + "/" + NewRequestID(), TaskQueue: workflows.TaskQueue,
	}, workflows.CompactSessionWorkflowName, in)
	if err != nil {
		return turnapi.CompressContextResult{}, fmt.Errorf("compact session %s: %w", in.SessionID, err)
	}
	var res turnapi.CompressContextResult
	if err := run.Get(ctx, &res); err != nil {
		return res, fmt.Errorf("compact session %s: %w", in.SessionID, err)
	}
	return res, nil
}
