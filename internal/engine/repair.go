package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/talaria-agent/talaria/config"
)

// maxRepairs bounds the turns one start looks at.
const maxRepairs = 500

// RepairOrphanTurns records as interrupted, with a note, every turn the
// store still holds as running whose workflow no longer runs in Temporal:
// its process was killed and its workflow is gone (Temporal's data was
// reset, or the workflow was terminated) or closed without recording its
// outcome. A turn whose workflow still runs is left alone: a worker
// resumes it. It returns how many turns it repaired; each is logged.
func (rt *Runtime) RepairOrphanTurns(ctx context.Context) (int, error) {
	running, err := rt.Store.RunningTurns(ctx, maxRepairs)
	if err != nil {
		return 0, fmt.Errorf("repair orphan turns: %w", err)
	}
	repaired := 0
	for _, t := range running {
		state, err := rt.workflowState(ctx, t.ID)
		if err != nil {
			return repaired, fmt.Errorf("repair orphan turns: %w", err)
		}
		note, orphan := orphanNote(state)
		if !orphan {
			continue
		}
		changed, err := rt.Store.InterruptOrphanTurn(ctx, t.ID, note, time.Now().UTC())
		if err != nil {
			return repaired, fmt.Errorf("repair orphan turns: %w", err)
		}
		if changed {
			repaired++
			rt.logger.Warn("a turn recorded as running had no workflow left; recorded as interrupted",
				"session", t.SessionID, "turn", t.ID, "workflow", state)
		}
	}
	return repaired, nil
}

// workflowState says what Temporal holds for a turn's workflow: "" when it
// has none, else its status in lower case ("running", "completed", ...).
func (rt *Runtime) workflowState(ctx context.Context, turnID string) (string, error) {
	desc, err := rt.Client.DescribeWorkflowExecution(ctx, turnID, "")
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("describe turn %s: %w", turnID, err)
	}
	return workflowStatus(desc.GetWorkflowExecutionInfo().GetStatus()), nil
}

// workflowStatus names a workflow status in lower case. Pure.
func workflowStatus(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return "running"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed out"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return "continued as new"
	}
	return strings.ToLower(s.String())
}

// orphanNote is the note a turn recorded as running gets when its
// workflow is in state (see workflowState), and whether it is an orphan at
// all: a running workflow is not. Pure.
func orphanNote(state string) (string, bool) {
	switch state {
	case "running":
		return "", false
	case "":
		return "interrupted: the process running this turn stopped and its workflow is gone; recorded as interrupted at the next start", true
	}
	return "interrupted: the turn's workflow ended (" + state + ") without recording its outcome; recorded as interrupted at the next start", true
}

// repairAtStart runs RepairOrphanTurns when a worker starts; a failure is
// a warning (the turns stay as they are until the next start). It runs only
// where this process's Temporal is the one every turn of the store ran on:
// the embedded server over the SQLite store of the same home. A shared
// PostgreSQL store may hold turns of other Temporal servers or namespaces,
// whose workflows this one cannot see (NotFound is not "gone" there).
func (rt *Runtime) repairAtStart(ctx context.Context) {
	if rt.Server == nil || config.IsPostgres(rt.Config.DB) {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := rt.RepairOrphanTurns(rctx); err != nil {
		rt.logger.Warn("could not check for turns left running", "error", err)
	}
}
