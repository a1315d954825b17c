package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/scheduler"
)

// TestSettleRunNow: a run started by hand whose process stopped before
// confirming it is confirmed when its workflow exists, recorded failed
// (saying why) when it was never started, and left alone while young or
// when it is a scheduled slot (the ticks resume those).
func TestSettleRunNow(t *testing.T) {
	t.Parallel()
	model := fakellm.New()
	defer model.Close()
	rt := startRuntime(t, model)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	log := filepath.Join(t.TempDir(), "runs.log")
	// The run lasts a few seconds, so that it is still running (its
	// record still "started") when the runs are settled.
	job, err := rt.Store.CreateCronJob(ctx, models.CronJob{ID: "settle", Name: "settle", Schedule: "@daily",
		PreRunScript: "sleep 5; echo ran >> " + log + "; echo report", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	old := now.Add(-10 * time.Minute)
	started := scheduler.RunNowSlot(old)                     // recorded and started, never confirmed
	neverStarted := scheduler.NextRunNowSlot(started)        // recorded only
	young := scheduler.RunNowSlot(now.Add(-time.Second))     // within the grace
	scheduled := old.Truncate(time.Minute).Add(-time.Minute) // a tick's slot
	for _, r := range []struct {
		slot     time.Time
		recorded time.Time
	}{{started, old}, {neverStarted, old}, {young, now}, {scheduled, old}} {
		run := models.CronRun{JobID: job.ID, ScheduledAt: r.slot, WorkflowID: scheduler.WorkflowID(job.ID, r.slot),
			Status: models.RunStarted, RecordedAt: r.recorded}
		if _, err := rt.Store.RecordRun(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	if err := rt.Cron().Start(ctx, *job, started, scheduler.WorkflowID(job.ID, started)); err != nil {
		t.Fatal(err)
	}
	n, err := rt.settleRunNow(ctx, now)
	if err != nil || n != 2 {
		t.Fatalf("settled %d (%v), want 2", n, err)
	}
	get := func(slot time.Time) *models.CronRun {
		run, err := rt.Store.CronRun(ctx, job.ID, slot)
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	if r := get(started); r.StartedAt == nil || r.Status == models.RunFailed {
		t.Errorf("a started run was not confirmed: %+v", r)
	}
	if r := get(neverStarted); r.Status != models.RunFailed || r.EndedAt == nil || !strings.Contains(r.Error, "not started") {
		t.Errorf("a run never started was not recorded failed: %+v", r)
	}
	for _, slot := range []time.Time{young, scheduled} {
		if r := get(slot); r.Status != models.RunStarted || r.StartedAt != nil {
			t.Errorf("run at %s was touched: %+v", slot, r)
		}
	}
}
