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
	if depth == 0 {
		return workflows.Progress{}, "", false
	}
	for _, t := range rt.RunningTasks(ctx, sessions...) {
		if t.PendingApproval != nil {
			return t.Progress, t.Session, true
		}
		if deeper, task, ok := rt.waitingTask(ctx, depth-1, t.Session, t.ActiveSessionID); ok {
			return deeper, task, true
		}
	}
	return workflows.Progress{}, "", false
}

// TaskRun is a delegated task whose turn runs now, and its progress.
type TaskRun struct {
	Session string
	workflows.Progress
}

// recentTasks bounds the tasks looked at for a running delegation: those
// made last (a delegation makes at most turnapi.MaxDelegatedTasks a call).
const recentTasks = 24

// RunningTasks are the tasks delegated from the sessions named (the recent
// ones of each) whose turn runs now, oldest first.
func (rt *Runtime) RunningTasks(ctx context.Context, sessions ...string) []TaskRun {
	if rt.Store == nil {
		return nil
	}
	var out []TaskRun
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
		for _, t := range recent(tasks) {
			id := workflows.TurnWorkflowID(t.ID, 1)
			desc, err := rt.Client.DescribeWorkflowExecution(ctx, id, "")
			if err != nil || desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				continue // ended: its session shows how
			}
			if p, err := rt.Progress(ctx, id); err == nil {
				out = append(out, TaskRun{Session: t.ID, Progress: p})
			}
		}
	}
	return out
}

// recent are the last recentTasks of tasks, oldest first. Pure.
func recent(tasks []models.Session) []models.Session {
	return tasks[max(0, len(tasks)-recentTasks):]
}
