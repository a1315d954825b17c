package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/scheduler"
	"github.com/talaria-agent/talaria/workflows"
)

// CronStarter starts scheduled slots as CronRunWorkflows on Temporal and
// answers whether a job's last run still goes. It implements
// scheduler.Starter and scheduler.Running.
type CronStarter struct{ rt *Runtime }

// Cron returns the runtime's scheduler side.
func (rt *Runtime) Cron() CronStarter { return CronStarter{rt} }

// Start starts one slot; a slot already started (another replica, a retried
// tick) is not an error: the workflow id is the slot's.
func (c CronStarter) Start(ctx context.Context, job models.CronJob, slot time.Time, workflowID string) error {
	_, err := c.rt.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       workflowID,
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
	}, workflows.CronRunWorkflowName, c.Input(job, slot))
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &already) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("start %s: %w", workflowID, err)
	}
	return nil
}

// IsRunning reports whether the job's latest run has not ended.
func (c CronStarter) IsRunning(ctx context.Context, job models.CronJob) (bool, error) {
	runs, err := c.rt.Store.CronRuns(ctx, job.ID, 1)
	if err != nil || len(runs) == 0 {
		return false, err
	}
	return runs[0].Status == models.RunStarted && runs[0].EndedAt == nil, nil
}

// Input is the workflow input of one slot of job.
func (c CronStarter) Input(job models.CronJob, slot time.Time) workflows.CronRunInput {
	cfg := c.rt.Config
	turn := TurnTemplate(cfg, filepath.Join(cfg.Home, "cron", "work"))
	turn.Tools = job.Toolsets
	if job.Model != "" {
		turn.Model = job.Model
	}
	if job.MaxIterations > 0 {
		turn.MaxIterations = job.MaxIterations
	}
	return workflows.CronRunInput{JobID: job.ID, JobName: job.Name, Slot: slot, Prompt: job.Prompt,
		PreRunScript: job.PreRunScript, Deliver: job.Deliver, Turn: turn}
}

// RunNow starts a job's slot for the current minute at once.
func (c CronStarter) RunNow(ctx context.Context, job models.CronJob) (string, error) {
	slot := time.Now().UTC().Truncate(time.Minute)
	id := scheduler.WorkflowID(job.ID, slot)
	created, err := c.rt.Store.RecordRun(ctx, models.CronRun{JobID: job.ID, ScheduledAt: slot, WorkflowID: id, Status: models.RunStarted})
	if err != nil {
		return "", err
	}
	if !created {
		return id, fmt.Errorf("%s already ran in this minute's slot", job.Name)
	}
	return id, c.Start(ctx, job, slot, id)
}

// StartScheduler runs the cron tick every minute until Stop.
func (rt *Runtime) StartScheduler(ctx context.Context) (*scheduler.Ticker, error) {
	t := scheduler.NewTicker(rt.Store, rt.Cron(), rt.Cron(), scheduler.WithLogger(rt.logger),
		// While the store does not answer, ticks would only fail on it.
		scheduler.WithPaused(rt.WorkPaused))
	if err := t.Start(ctx); err != nil {
		return nil, fmt.Errorf("start the scheduler: %w", err)
	}
	return t, nil
}
