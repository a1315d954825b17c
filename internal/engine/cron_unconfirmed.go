package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/scheduler"
)

// runNowGrace is how long a run started by hand may stay unconfirmed
// before the scheduler looks at it: RunNow records, starts and confirms a
// run in well under a second.
const runNowGrace = 2 * time.Minute

// settleRunNow resolves the runs started by hand ('cron run-now') whose
// process stopped between recording the run and confirming its start:
// one whose workflow exists is confirmed (it runs, or ran); one whose
// workflow was never started is recorded failed, saying so. Scheduled
// slots are the ticks' (scheduler's resume). It returns how many it
// settled.
func (rt *Runtime) settleRunNow(ctx context.Context, now time.Time) (int, error) {
	runs, err := rt.Store.UnconfirmedRuns(ctx, now.Add(-runNowGrace))
	if err != nil {
		return 0, err
	}
	settled := 0
	for _, run := range runs {
		if !scheduler.IsRunNowSlot(run.ScheduledAt) || run.WorkflowID == "" {
			continue
		}
		_, err := rt.Client.DescribeWorkflowExecution(ctx, run.WorkflowID, "")
		var notFound *serviceerror.NotFound
		switch {
		case err == nil:
			if err := rt.Store.MarkRunStarted(ctx, run.JobID, run.ScheduledAt, now); err != nil {
				return settled, err
			}
		case errors.As(err, &notFound):
			ended := now.UTC()
			run.Status, run.EndedAt = models.RunFailed, &ended
			run.Error = "not started: the command that asked for this run stopped before starting it; run it again with 'talaria cron run-now'"
			if err := rt.Store.UpdateRun(ctx, run); err != nil {
				return settled, err
			}
		default:
			return settled, fmt.Errorf("describe run %s: %w", run.WorkflowID, err)
		}
		settled++
	}
	return settled, nil
}
