package main

import (
	"context"
	"errors"
	"time"

	"github.com/talaria-agent/talaria"
)

// Warnings of the cron commands when nothing will run what they saved or
// started. Each is one line.
const (
	noSchedulerWarning = "talaria: warning: no scheduler is running for this store: the job is saved, but none of its " +
		"slots runs until 'talaria serve' (or 'talaria scheduler') runs"
	noWorkerWarning = "talaria: warning: no worker is running for this Temporal: the run is started and waits until " +
		"'talaria serve' (or 'talaria worker') runs"
)

// serveRunning reports whether a `talaria serve` holds home (it runs a
// scheduler and a worker itself). It creates nothing in a home that does
// not exist.
func serveRunning(home string) bool {
	lock, err := talaria.TryLock(home)
	if err == nil {
		lock.Release()
		return false
	}
	if !errors.Is(err, talaria.ErrLocked) {
		return false
	}
	_, err = talaria.ReadServeInfo(home)
	return err == nil
}

// schedulerWarning is the warning `cron add` prints when no scheduler will
// run the job: neither a serve on home nor a scheduler beating on st
// (on any machine). A store that cannot tell gives no warning.
func schedulerWarning(ctx context.Context, st *talaria.Store, home string, now time.Time) string {
	if serveRunning(home) {
		return ""
	}
	running, err := talaria.SchedulerRunning(ctx, st, now)
	if err != nil || running {
		return ""
	}
	return noSchedulerWarning
}

// workerWarning is the warning `cron run-now` prints when no worker polls
// for the run it started; a Temporal that cannot tell gives no warning.
func workerWarning(ctx context.Context, rt *talaria.Runtime) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := rt.WorkflowPollers(ctx)
	if err != nil || n > 0 {
		return ""
	}
	return noWorkerWarning
}
