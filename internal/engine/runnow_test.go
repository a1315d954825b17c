package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/scheduler"
)

// TestRunNowTwiceRunsTwice: run-now twice at once starts two runs (two
// slots, two workflows, each run once), and a job stored without delivery
// targets (as jobs made before the default were) delivers each run
// locally.
func TestRunNowTwiceRunsTwice(t *testing.T) {
	t.Parallel()
	model := fakellm.New()
	defer model.Close()
	rt := startRuntime(t, model)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	log := filepath.Join(t.TempDir(), "runs.log")
	job, err := rt.Store.CreateCronJob(ctx, models.CronJob{ID: "twice", Name: "twice", Schedule: "@daily",
		PreRunScript: "echo ran >> " + log + "; echo report", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	var runs []models.CronRun
	for range 2 {
		run, err := rt.Cron().RunNow(ctx, *job)
		if err != nil {
			t.Fatalf("run-now: %v", err)
		}
		runs = append(runs, run)
	}
	if runs[0].WorkflowID == runs[1].WorkflowID || runs[0].ScheduledAt.Equal(runs[1].ScheduledAt) {
		t.Fatalf("two run-nows share a run: %+v", runs)
	}
	for _, r := range runs {
		if !scheduler.IsRunNowSlot(r.ScheduledAt) || r.WorkflowID != scheduler.WorkflowID(job.ID, r.ScheduledAt) {
			t.Fatalf("run %+v: not a run-now slot or workflow id", r)
		}
	}
	waitFor(t, time.Minute, func() bool {
		stored, _ := rt.Store.CronRuns(ctx, job.ID, 0)
		done := 0
		for _, r := range stored {
			if r.EndedAt != nil {
				done++
			}
		}
		return done == 2
	})
	stored, _ := rt.Store.CronRuns(ctx, job.ID, 0)
	for _, r := range stored {
		if r.Status != models.RunCompleted || r.StartedAt == nil || !strings.Contains(r.Delivery, "local → ") {
			t.Fatalf("run %+v", r)
		}
	}
	if data, _ := os.ReadFile(log); strings.Count(string(data), "ran\n") != 2 {
		t.Fatalf("the script ran %d times, want 2", strings.Count(string(data), "ran\n"))
	}
	files, _ := filepath.Glob(filepath.Join(rt.Config.Home, "cron", "output", "twice", "*.md"))
	if len(files) != 2 {
		t.Fatalf("local deliveries: %v", files)
	}
	if got := DeliveryTargets(models.CronJob{Deliver: []string{"webhook:http://x"}}); len(got) != 1 || got[0] != "webhook:http://x" {
		t.Fatalf("DeliveryTargets kept %v", got)
	}
}

// TestWorkflowPollers: a runtime with a worker is seen polling the turn
// task queue; one without (a client, as `cron run-now` is) on its own
// Temporal sees none.
func TestWorkflowPollers(t *testing.T) {
	t.Parallel()
	model := fakellm.New()
	defer model.Close()
	ctx := context.Background()
	client := startRuntime(t, model, func(_ *config.Config, o *Options) { o.Worker = false })
	if n, err := client.WorkflowPollers(ctx); err != nil || n != 0 {
		t.Fatalf("without a worker: %d pollers, %v", n, err)
	}
	worker := startRuntime(t, model)
	waitFor(t, 30*time.Second, func() bool {
		n, err := worker.WorkflowPollers(ctx)
		return err == nil && n > 0
	})
}
