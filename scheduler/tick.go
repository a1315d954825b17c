package scheduler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/talaria-agent/talaria/models"
)

// Starter starts the workflow of one slot of a job. Starting a workflow id
// that is already started must return nil: a slot whose start could not be
// confirmed is started again.
type Starter interface {
	Start(ctx context.Context, job models.CronJob, slot time.Time, workflowID string) error
}

// Running reports whether a job's previous run is still going, for the
// overlap policy "skip".
type Running interface {
	IsRunning(ctx context.Context, job models.CronJob) (bool, error)
}

// Store is the part of *models.Store that Tick uses.
type Store interface {
	EnabledCronJobs(ctx context.Context) ([]models.CronJob, error)
	RecordRun(ctx context.Context, run models.CronRun) (created bool, err error)
	CronRun(ctx context.Context, jobID string, slot time.Time) (*models.CronRun, error)
	UpdateRun(ctx context.Context, run models.CronRun) error
	MarkRunStarted(ctx context.Context, jobID string, slot, at time.Time) error
	AdvanceJob(ctx context.Context, jobID string, slot time.Time) error
	SetCronJobEnabled(ctx context.Context, idOrName string, enabled bool) error
}

var _ Store = (*models.Store)(nil)

// WorkflowID is the workflow id of a job's slot: "cron/<job-id>/<slot>",
// the slot in UTC RFC 3339.
func WorkflowID(jobID string, slot time.Time) string {
	return "cron/" + jobID + "/" + slot.UTC().Format(time.RFC3339)
}

// SlotRef names one slot of a job.
type SlotRef struct {
	JobID string
	Slot  time.Time
}

// Result tells what one Tick did: the slots whose workflow it started, and
// those it recorded skipped or missed. Slots another scheduler handled are
// not listed. Errors holds one *JobError per job that failed.
type Result struct {
	Started, Skipped, Missed []SlotRef
	Errors                   []error
}

// JobError is the failure of one job in a Tick.
type JobError struct {
	JobID string
	Err   error
}

func (e *JobError) Error() string { return fmt.Sprintf("scheduler: cron job %q: %v", e.JobID, e.Err) }

func (e *JobError) Unwrap() error { return e.Err }

// Tick handles every enabled job due at or before the minute of now.
//
// For each job it walks the slots after the job's LastScheduled (or, for a
// new job, after its CreatedAt) up to that minute. Slots older than the
// job's CatchUpWindow are recorded "missed"; of the others, the catch-up
// policy decides which run ("none": only the current minute's; "last": the
// latest; "all": every one) and records the rest "missed". A slot that runs
// is recorded "skipped" when the overlap policy is "skip" and the job's
// previous run is still going (asked once per job and Tick); otherwise it is
// recorded "started" and its workflow is started, by the caller that
// recorded it, under WorkflowID. The job's LastScheduled then moves to the
// last slot handled, and a job without further slots (a one-shot) is
// disabled.
//
// The run record of a slot is unique, so several schedulers ticking the
// same minute over one store (or a tick retried after a crash) handle each
// slot once. A slot recorded "started" whose start was not confirmed within
// the start grace (WithStartGrace) of being recorded, because the Starter
// failed or the process died, is started again by later ticks while it is
// within the catch-up window, and recorded "missed" after. Until the grace
// has passed, the job's later slots wait for a later tick.
//
// A job's error stops only that job, leaving its LastScheduled before the
// failed slot; it is reported in Result.Errors. Tick returns an error only
// when it cannot list the jobs or ctx ends. A nil running never reports a
// job as running.
func Tick(ctx context.Context, st Store, starter Starter, running Running, now time.Time, opts ...Option) (Result, error) {
	cfg := newConfig(opts)
	minute := now.UTC().Truncate(time.Minute)
	var res Result
	jobs, err := st.EnabledCronJobs(ctx)
	if err != nil {
		return res, fmt.Errorf("scheduler: tick %s: %w", minute.Format(time.RFC3339), err)
	}
	// Jobs are independent: they are handled concurrently (DefaultConcurrency
	// at a time), each into its own result, merged in job order.
	perJob := make([]Result, len(jobs))
	sem := make(chan struct{}, DefaultConcurrency)
	var wg sync.WaitGroup
	for i, job := range jobs {
		if err := ctx.Err(); err != nil {
			wg.Wait()
			return merge(perJob), fmt.Errorf("scheduler: tick %s: %w", minute.Format(time.RFC3339), err)
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(i int, job models.CronJob) {
			defer func() { <-sem; wg.Done() }()
			t := &jobTick{cfg: cfg, st: st, starter: starter, running: running, job: job, now: minute, res: &perJob[i]}
			if err := t.run(ctx); err != nil {
				perJob[i].Errors = append(perJob[i].Errors, &JobError{JobID: job.ID, Err: err})
			}
		}(i, job)
	}
	wg.Wait()
	return merge(perJob), nil
}

// merge concatenates per-job results in job order.
func merge(parts []Result) Result {
	var res Result
	for _, p := range parts {
		res.Started = append(res.Started, p.Started...)
		res.Skipped = append(res.Skipped, p.Skipped...)
		res.Missed = append(res.Missed, p.Missed...)
		res.Errors = append(res.Errors, p.Errors...)
	}
	return res
}

// action is what becomes of one slot.
type action int

const (
	actMiss action = iota
	actRun
)

type plannedSlot struct {
	slot time.Time
	act  action
}

// jobTick is one job's share of a Tick.
type jobTick struct {
	cfg     config
	st      Store
	starter Starter
	running Running
	job     models.CronJob
	now     time.Time // the tick's minute
	oldest  time.Time // slots before it are outside the catch-up window
	res     *Result

	busy    bool // the previous run is still going
	checked bool // busy is known
}

func (t *jobTick) run(ctx context.Context) error {
	job := t.job
	sched, err := ParseSchedule(job.Schedule, job.TimeZone, job.CreatedAt, job.CreatedAt)
	if err != nil {
		return err
	}
	from := job.CreatedAt.UTC()
	if job.LastScheduled != nil && job.LastScheduled.After(from) {
		from = job.LastScheduled.UTC()
	}
	window := job.CatchUpWindow
	if window <= 0 {
		window = models.DefaultCatchUpWindow
	}
	t.oldest = t.now.Add(-window)

	plan, err := t.plan(ctx, sched, from)
	if err != nil {
		return err
	}
	last := time.Time{}
	for _, p := range plan {
		if err = t.handle(ctx, p); err != nil {
			if errors.Is(err, errStarting) {
				err = nil
			}
			break
		}
		last = p.slot
	}
	if !last.IsZero() {
		if aerr := t.st.AdvanceJob(ctx, job.ID, last); aerr != nil {
			return errors.Join(err, aerr)
		}
		from = last
	}
	if err != nil {
		return err
	}
	if sched.Next(from).IsZero() {
		if err := t.st.SetCronJobEnabled(ctx, job.ID, false); err != nil {
			return fmt.Errorf("disable after its last slot: %w", err)
		}
	}
	return nil
}

// plan lists the slots after from up to the tick's minute, oldest first,
// with what becomes of each. Of the slots outside the catch-up window only
// the latest cfg.maxMissed are listed.
func (t *jobTick) plan(ctx context.Context, sched Schedule, from time.Time) ([]plannedSlot, error) {
	var old, due []time.Time
	prev := from
	for s := sched.Next(from); !s.IsZero() && !s.After(t.now); s = sched.Next(s) {
		if !s.After(prev) {
			return nil, fmt.Errorf("schedule %q went back from %s to %s", sched, prev.Format(time.RFC3339), s.Format(time.RFC3339))
		}
		prev = s
		if s.Before(t.oldest) {
			old = append(old, s)
			if len(old) >= 2*t.cfg.maxMissed {
				old = append(old[:0], old[len(old)-t.cfg.maxMissed:]...)
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			continue
		}
		due = append(due, s)
	}
	if len(old) > t.cfg.maxMissed {
		old = old[len(old)-t.cfg.maxMissed:]
	}

	plan := make([]plannedSlot, 0, len(old)+len(due))
	for _, s := range old {
		plan = append(plan, plannedSlot{slot: s, act: actMiss})
	}
	for i, s := range due {
		act := actMiss
		switch t.job.CatchUp {
		case models.CatchUpAll:
			act = actRun
		case models.CatchUpNone:
			if s.Equal(t.now) {
				act = actRun
			}
		default: // models.CatchUpLast
			if i == len(due)-1 {
				act = actRun
			}
		}
		plan = append(plan, plannedSlot{slot: s, act: act})
	}
	return plan, nil
}

// handle records one slot and starts its workflow when it runs.
func (t *jobTick) handle(ctx context.Context, p plannedSlot) error {
	ref := SlotRef{JobID: t.job.ID, Slot: p.slot}
	run := models.CronRun{JobID: t.job.ID, ScheduledAt: p.slot, Status: models.RunMissed, RecordedAt: t.cfg.clock()}
	if p.act == actRun {
		run.WorkflowID = WorkflowID(t.job.ID, p.slot)
		run.Status = models.RunStarted
		busy, err := t.isRunning(ctx)
		if err != nil {
			return err
		}
		if busy {
			run.Status, run.WorkflowID = models.RunSkipped, ""
		}
	}

	created, err := t.st.RecordRun(ctx, run)
	if err != nil {
		return err
	}
	if !created {
		return t.resume(ctx, ref)
	}
	switch run.Status {
	case models.RunMissed:
		t.res.Missed = append(t.res.Missed, ref)
		return nil
	case models.RunSkipped:
		t.res.Skipped = append(t.res.Skipped, ref)
		return nil
	}
	return t.start(ctx, ref, run.WorkflowID)
}

// errStarting stops a job's share of a Tick at a slot whose start is
// probably still under way elsewhere: a later tick looks at it again.
var errStarting = errors.New("slot start in progress")

// resume handles a slot that is already recorded: nothing to do, unless its
// start was never confirmed.
func (t *jobTick) resume(ctx context.Context, ref SlotRef) error {
	run, err := t.st.CronRun(ctx, ref.JobID, ref.Slot)
	if err != nil {
		return err
	}
	if run.Status != models.RunStarted || run.StartedAt != nil {
		return nil
	}
	if t.cfg.clock().Sub(run.RecordedAt) < t.cfg.grace {
		return errStarting
	}
	if ref.Slot.Before(t.oldest) {
		run.Status = models.RunMissed
		run.Error = "the start of the workflow was not confirmed within the catch-up window"
		if err := t.st.UpdateRun(ctx, *run); err != nil {
			return err
		}
		t.res.Missed = append(t.res.Missed, ref)
		return nil
	}
	workflowID := cmp.Or(run.WorkflowID, WorkflowID(ref.JobID, ref.Slot))
	return t.start(ctx, ref, workflowID)
}

// start starts the slot's workflow and confirms it in the store.
func (t *jobTick) start(ctx context.Context, ref SlotRef, workflowID string) error {
	if t.starter == nil {
		return fmt.Errorf("start %s: no starter", workflowID)
	}
	if err := t.starter.Start(ctx, t.job, ref.Slot, workflowID); err != nil {
		return fmt.Errorf("start %s: %w", workflowID, err)
	}
	if err := t.st.MarkRunStarted(ctx, ref.JobID, ref.Slot, t.cfg.clock()); err != nil {
		return err
	}
	t.res.Started = append(t.res.Started, ref)
	return nil
}

// isRunning asks Running once per job and Tick, and only for the overlap
// policy "skip".
func (t *jobTick) isRunning(ctx context.Context) (bool, error) {
	if t.checked {
		return t.busy, nil
	}
	t.checked = true
	if t.job.Overlap == models.OverlapAllow || t.running == nil {
		return false, nil
	}
	busy, err := t.running.IsRunning(ctx, t.job)
	if err != nil {
		t.checked = false
		return false, fmt.Errorf("is the previous run still going: %w", err)
	}
	t.busy = busy
	return busy, nil
}
