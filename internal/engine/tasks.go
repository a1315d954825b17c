package engine

import (
	"context"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// maxTaskDepth bounds how deep Waiting looks among delegated tasks.
const maxTaskDepth = 4

// Waiting is the progress of the turn of the session that waits on a
// person: its running turn (a goal's running turn, in a goal's session),
// or, while that turn delegates, the first of its tasks (and theirs) that
// waits for an approval, with the task's session. With none waiting, the
// running turn's progress and "".
func (rt *Runtime) Waiting(ctx context.Context, sessionID string) (workflows.Progress, string, error) {
	p, err := rt.Running(ctx, sessionID)
	if err != nil {
		g, gerr := rt.GoalProgress(ctx, sessionID)
		if gerr != nil || g.Running == "" {
			return p, "", err
		}
		if p, err = rt.Progress(ctx, g.Running); err != nil {
			return p, "", err
		}
	}
	if p.PendingApproval != nil || p.PendingQuestion != nil {
		return p, "", nil
	}
	if tp, task, ok := rt.waitingTask(ctx, maxTaskDepth, sessionID, p.ActiveSessionID); ok {
		return tp, task, nil
	}
	return p, "", nil
}

// waitingTask finds a running task of the sessions (or of its own tasks)
// that waits for an approval.
func (rt *Runtime) waitingTask(ctx context.Context, depth int, sessions ...string) (workflows.Progress, string, bool) {
	if depth == 0 || rt.Store == nil {
		return workflows.Progress{}, "", false
	}
	seen := map[string]bool{}
	for _, s := range sessions {
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		tasks, err := rt.Store.Tasks(ctx, s)
		if err != nil {
			continue
		}
		for _, t := range RecentTasks(tasks) {
			id := workflows.TurnWorkflowID(t.ID, 1)
			desc, err := rt.Client.DescribeWorkflowExecution(ctx, id, "")
			if err != nil || desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				continue
			}
			tp, err := rt.Progress(ctx, id)
			if err != nil {
				continue
			}
			if tp.PendingApproval != nil {
				return tp, t.ID, true
			}
			if deeper, task, ok := rt.waitingTask(ctx, depth-1, t.ID, tp.ActiveSessionID); ok {
				return deeper, task, true
			}
		}
	}
	return workflows.Progress{}, "", false
}

// recentTasks bounds the tasks looked at for a running delegation: those
// made last (a delegation makes at most turnapi.MaxDelegatedTasks a call).
const recentTasks = 24

// RecentTasks are the last tasks of a session's, oldest first: where a
// running delegation's are. Pure.
func RecentTasks(tasks []models.Session) []models.Session {
	return tasks[max(0, len(tasks)-recentTasks):]
}
