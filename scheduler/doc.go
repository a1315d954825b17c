// Package scheduler starts scheduled agent jobs: each slot of a cron job
// (models.CronJob) becomes one workflow, started exactly once however many
// schedulers share the store.
//
// ParseSchedule reads a job's schedule: a five-field cron expression or an
// @ descriptor in a time zone, an interval ("every 2h") anchored at the
// job's creation, or a one-shot ("in 30m", an RFC 3339 timestamp). Slots are
// whole minutes in UTC.
//
// Tick is one pass of the scheduler over the store for one minute: it
// records what becomes of each slot due (models.CronRun: started, skipped or
// missed) and starts the workflows through a Starter. The run record of a
// (job, slot) pair is unique, and only the caller that creates it starts the
// workflow, under a workflow id derived from the pair (WorkflowID); the
// Starter treats a second start of the same id as done, which covers a start
// that has to be retried. Tick depends only on the store and the minute it
// is given, so tests drive it with any clock.
//
// Ticker runs Tick once when it starts and then at second 0 of every minute
// with the cron library (github.com/robfig/cron/v3), in UTC, one tick at a
// time and in order. The tick at start means a restart within a minute, or
// across one, runs the slot of the minute it starts in at once; only slots
// due while no scheduler ticked are left to the job's catch-up policy
// (models.CatchUpLast by default: after downtime the latest of them runs).
// Run one or several: replicas sharing a store do not start a slot twice.
//
// Errors are wrapped with context; match ErrInvalidSchedule and
// ErrTickerStarted with errors.Is, and a job's failure in a Tick with
// errors.As and *JobError.
package scheduler
