package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/talaria-agent/talaria/internal/tools"
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
	turn.Tools = tools.ExpandToolsets(job.Toolsets)
	if job.Model != "" {
		turn.Model = job.Model
	}
	if job.MaxIterations > 0 {
		turn.MaxIterations = job.MaxIterations
	}
	turn.Owner = job.Owner // a chat's job runs in sessions of the chat's
	return workflows.CronRunInput{JobID: job.ID, JobName: job.Name, Slot: slot, Prompt: job.Prompt,
		PreRunScript: job.PreRunScript, Deliver: DeliveryTargets(job), Turn: turn}
}

// runNowAttempts bounds the search for a free run-now slot: that many
// requests for one job within as many seconds.
const runNowAttempts = 120

// DefaultDelivery is where a job without delivery targets delivers: a
// file per run under $TALARIA_HOME/cron/output/<job>/, so that no run's
// output is lost (jobs made before the default existed included).
const DefaultDelivery = "local"

// OriginDelivery is the delivery target of the chat that made a job, and
// the default of a job made in a chat.
const OriginDelivery = "origin"

// DeliveryTargets are the targets job delivers to: its own, or
// DefaultDelivery when it has none. Pure.
func DeliveryTargets(job models.CronJob) []string {
	if len(job.Deliver) == 0 && job.Origin != "" {
		return []string{OriginDelivery}
	}
	if len(job.Deliver) == 0 {
		return []string{DefaultDelivery}
	}
	return job.Deliver
}

// RunNow starts a run of job at once, outside its schedule, and returns it
// as recorded. Every call is a run of its own (see scheduler.RunNowSlot):
// its slot, run record, workflow id and session are new, so run-now twice
// in a minute runs twice, while the workflow id keeps each request's run
// exactly once. A run whose workflow could not be started is recorded
// failed.
func (c CronStarter) RunNow(ctx context.Context, job models.CronJob) (models.CronRun, error) {
	slot := scheduler.RunNowSlot(time.Now())
	for range runNowAttempts {
		run := models.CronRun{JobID: job.ID, ScheduledAt: slot, WorkflowID: scheduler.WorkflowID(job.ID, slot), Status: models.RunStarted}
		created, err := c.rt.Store.RecordRun(ctx, run)
		if err != nil {
			return run, err
		}
		if !created {
			slot = scheduler.NextRunNowSlot(slot)
			continue
		}
		if err := c.Start(ctx, job, slot, run.WorkflowID); err != nil {
			failed := run
			ended := time.Now()
			failed.Status, failed.EndedAt, failed.Error = models.RunFailed, &ended, "not started: "+err.Error()
			if uerr := c.rt.Store.UpdateRun(context.WithoutCancel(ctx), failed); uerr != nil {
				err = errors.Join(err, uerr)
			}
			return failed, err
		}
		return run, c.rt.Store.MarkRunStarted(ctx, job.ID, slot, time.Now())
	}
	return models.CronRun{}, fmt.Errorf("%s: no free run-now slot after %d tries: too many runs at once", job.Name, runNowAttempts)
}

// StartScheduler runs the cron tick every minute until Stop.
func (rt *Runtime) StartScheduler(ctx context.Context) (*scheduler.Ticker, error) {
	id := schedulerID()
	t := scheduler.NewTicker(rt.Store, rt.Cron(), rt.Cron(), scheduler.WithLogger(rt.logger),
		// While the store does not answer, ticks would only fail on it.
		scheduler.WithPaused(rt.WorkPaused),
		// Clients (cron add) tell from the beats whether jobs will run.
		scheduler.WithHeartbeat(func(ctx context.Context, at time.Time) error {
			return rt.Store.RecordSchedulerBeat(ctx, id, at)
		}),
		scheduler.WithHousekeeping(rt.housekeeping(housekeepingEvery)),
		// Slots recorded missed or skipped count as runs that did not run.
		scheduler.WithOnTick(countTick(ctx, rt.telemetry.Metrics())))
	if err := t.Start(ctx); err != nil {
		return nil, fmt.Errorf("start the scheduler: %w", err)
	}
	return t, nil
}

// housekeepingEvery is how often the scheduler does its store chores.
const housekeepingEvery = 10 * time.Minute

// housekeeping is the scheduler's store chores after a tick, at most once
// per every: settle runs started by hand that were never confirmed, prune
// old live events, and summarise sessions gone idle (memory recall).
func (rt *Runtime) housekeeping(every time.Duration) func(ctx context.Context, now time.Time) error {
	var last time.Time
	return func(ctx context.Context, now time.Time) error {
		if !last.IsZero() && now.Sub(last) < every {
			return nil
		}
		last = now
		var settleErr error
		if n, err := rt.settleRunNow(ctx, now); err != nil {
			settleErr = fmt.Errorf("settle runs started by hand: %w", err)
		} else if n > 0 {
			rt.logger.Warn("cron runs started by hand were never confirmed; settled", "runs", n)
		}
		return errors.Join(settleErr, rt.pruneEvents(ctx, now), rt.summarizeIdle(ctx, now))
	}
}

// pruneEvents deletes the live events of turns ended more than
// events.retention ago (config.Events); a retention of 0 keeps them.
func (rt *Runtime) pruneEvents(ctx context.Context, now time.Time) error {
	retention := rt.Config.Events.Retention
	if retention <= 0 {
		return nil
	}
	n, err := rt.Store.PruneEndedEvents(ctx, now.Add(-retention))
	if err != nil {
		return fmt.Errorf("prune live events: %w", err)
	}
	if n > 0 {
		rt.logger.Info("pruned live events of ended turns", "events", n, "retention", retention)
	}
	return nil
}

// schedulerID names this process's scheduler in its beats: host/pid.
func schedulerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}

// SchedulerBeatFresh is how recent a scheduler's last beat must be for it
// to count as running: it beats every minute, at each tick.
const SchedulerBeatFresh = 150 * time.Second

// SchedulerRunning reports whether a scheduler using st (in a serve or a
// 'talaria scheduler', on any machine) beat within SchedulerBeatFresh
// before now.
func SchedulerRunning(ctx context.Context, st *models.Store, now time.Time) (bool, error) {
	last, err := st.LatestSchedulerBeat(ctx)
	if err != nil {
		return false, err
	}
	return !last.IsZero() && now.Sub(last) <= SchedulerBeatFresh, nil
}

// WorkflowPollers counts the workers polling the turn task queue for
// workflow tasks: with none, a started run waits until a serve or worker
// runs.
func (rt *Runtime) WorkflowPollers(ctx context.Context) (int, error) {
	resp, err := rt.Client.DescribeTaskQueue(ctx, workflows.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		return 0, fmt.Errorf("describe task queue %s: %w", workflows.TaskQueue, err)
	}
	return len(resp.GetPollers()), nil
}
