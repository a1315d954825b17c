package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/scheduler"
)

// createScriptJobs adds n jobs due every minute whose run only appends their
// name to log (a pre-run script with no prompt: no model call).
func createScriptJobs(t testing.TB, st *models.Store, n int, log string) {
	t.Helper()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("job%03d", i)
		_, err := st.CreateCronJob(context.Background(), models.CronJob{ID: name, Name: name, Schedule: "* * * * *",
			PreRunScript: fmt.Sprintf("echo %s >> %s", name, log), Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestTwoSchedulersRunEachSlotOnce: two scheduler replicas (each with its
// own store connection) tick the same minute against one Temporal: each of
// 100 due jobs runs exactly once.
func TestTwoSchedulersRunEachSlotOnce(t *testing.T) {
	t.Parallel()
	model := fakellm.New()
	defer model.Close()
	rt := startRuntime(t, model)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := filepath.Join(t.TempDir(), "runs.log")
	createScriptJobs(t, rt.Store, 100, log)
	second, err := models.Open(ctx, rt.Config.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	minute := time.Now().UTC().Truncate(time.Minute).Add(time.Minute)
	var wg sync.WaitGroup
	results := make([]scheduler.Result, 2)
	for i, st := range []*models.Store{rt.Store, second} {
		wg.Add(1)
		go func(i int, st *models.Store) {
			defer wg.Done()
			res, err := scheduler.Tick(ctx, st, rt.Cron(), rt.Cron(), minute)
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		}(i, st)
	}
	wg.Wait()
	started := len(results[0].Started) + len(results[1].Started)
	if started != 100 {
		t.Fatalf("the two replicas started %d slots, want 100 (%d + %d)", started, len(results[0].Started), len(results[1].Started))
	}
	waitFor(t, 2*time.Minute, func() bool {
		data, _ := os.ReadFile(log)
		return strings.Count(string(data), "\n") >= 100
	})
	time.Sleep(time.Second) // a duplicate run would show up now
	data, _ := os.ReadFile(log)
	lines := strings.Fields(string(data))
	sort.Strings(lines)
	if len(lines) != 100 || lines[0] != "job000" || lines[99] != "job099" {
		t.Fatalf("runs: %d lines (want each of 100 jobs once)", len(lines))
	}
	for i := 1; i < len(lines); i++ {
		if lines[i] == lines[i-1] {
			t.Fatalf("%s ran twice", lines[i])
		}
	}
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// BenchmarkTickStarts1000 (cron benchmark): the time from the minute
// boundary (the tick) until all of 1,000 due jobs' workflows are started.
func BenchmarkTickStarts1000(b *testing.B) {
	model := fakellm.New()
	defer model.Close()
	rt := startRuntime(b, model)
	createScriptJobs(b, rt.Store, 1000, filepath.Join(b.TempDir(), "runs.log"))
	minute := time.Now().UTC().Truncate(time.Minute)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		minute = minute.Add(time.Minute)
		start := time.Now()
		res, err := scheduler.Tick(context.Background(), rt.Store, rt.Cron(), rt.Cron(), minute)
		if err != nil || len(res.Started) != 1000 {
			b.Fatalf("tick: %v, started %d, errors %v", err, len(res.Started), res.Errors)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/1000-starts")
	}
}

// TestCronSilentScriptAndOverlap: a [SILENT] answer is not delivered; a job
// with only a pre-run script delivers its output with no model call; a slot
// due while the job's previous run still goes is recorded skipped.
func TestCronSilentScriptAndOverlap(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("[SILENT]"))
	defer model.Close()
	rt := startRuntime(t, model)
	ctx := context.Background()
	mk := func(job models.CronJob) {
		t.Helper()
		job.ID, job.Enabled, job.Deliver = job.Name, true, []string{"local"}
		if _, err := rt.Store.CreateCronJob(ctx, job); err != nil {
			t.Fatal(err)
		}
	}
	mk(models.CronJob{Name: "quiet", Schedule: "* * * * *", Prompt: "anything to report?"})
	mk(models.CronJob{Name: "report", Schedule: "* * * * *", PreRunScript: "echo disk 42% full"})
	mk(models.CronJob{Name: "slow", Schedule: "* * * * *", PreRunScript: "sleep 20"})
	minute := time.Now().UTC().Truncate(time.Minute).Add(time.Minute)
	if res, err := scheduler.Tick(ctx, rt.Store, rt.Cron(), rt.Cron(), minute); err != nil || len(res.Started) != 3 {
		t.Fatalf("first tick: %v %+v", err, res)
	}
	ended := func(job string) *models.CronRun {
		runs, _ := rt.Store.CronRuns(ctx, job, 1)
		if len(runs) == 1 && runs[0].EndedAt != nil {
			return &runs[0]
		}
		return nil
	}
	waitFor(t, time.Minute, func() bool { return ended("quiet") != nil && ended("report") != nil })
	if r := ended("quiet"); r.Status != models.RunCompleted || !strings.Contains(r.Delivery, "silent") {
		t.Fatalf("quiet run = %+v", r)
	}
	if files, _ := filepath.Glob(filepath.Join(rt.Config.Home, "cron", "output", "quiet", "*")); len(files) != 0 {
		t.Fatalf("a [SILENT] answer was delivered: %v", files)
	}
	files, _ := filepath.Glob(filepath.Join(rt.Config.Home, "cron", "output", "report", "*.md"))
	if len(files) != 1 {
		t.Fatalf("script output not delivered: %v", files)
	}
	if data, _ := os.ReadFile(files[0]); !strings.Contains(string(data), "disk 42% full") {
		t.Fatalf("delivered:\n%s", data)
	}
	if len(model.Requests()) != 1 {
		t.Fatalf("model calls = %d: a script-only job must not call the model", len(model.Requests()))
	}
	// The next minute: "slow" is still running, so its slot is skipped.
	res, err := scheduler.Tick(ctx, rt.Store, rt.Cron(), rt.Cron(), minute.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	skipped := false
	for _, s := range res.Skipped {
		skipped = skipped || s.JobID == "slow"
	}
	run, _ := rt.Store.CronRun(ctx, "slow", minute.Add(time.Minute))
	if !skipped || run == nil || run.Status != models.RunSkipped {
		t.Fatalf("overlapping slot: skipped=%v run=%+v", skipped, run)
	}
}

// BenchmarkTickStartsFloor1000 is BenchmarkTickStarts1000's floor: the same
// 1,000 slots' workflows started by the same client, as many at a time as a
// tick starts, their run records already written, with none of the tick's
// own reads and writes. The tick's time over "worker" is what the
// scheduler costs; "worker" is what the embedded server and the worker
// running the started workflows cost; "server" (no worker: the workflows
// wait) is what the server's start path alone costs.
func BenchmarkTickStartsFloor1000(b *testing.B) {
	for _, worker := range []bool{true, false} {
		name := map[bool]string{true: "worker", false: "server"}[worker]
		b.Run(name, func(b *testing.B) { benchmarkStartsFloor(b, worker) })
	}
}

func benchmarkStartsFloor(b *testing.B, worker bool) {
	model := fakellm.New()
	defer model.Close()
	rt := startRuntime(b, model, func(_ *config.Config, o *Options) { o.Worker = worker })
	createScriptJobs(b, rt.Store, 1000, filepath.Join(b.TempDir(), "runs.log"))
	ctx := context.Background()
	jobs, err := rt.Store.EnabledCronJobs(ctx)
	if err != nil || len(jobs) != 1000 {
		b.Fatalf("jobs: %d, %v", len(jobs), err)
	}
	minute := time.Now().UTC().Truncate(time.Minute)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		minute = minute.Add(time.Minute)
		for _, job := range jobs {
			run := models.CronRun{JobID: job.ID, ScheduledAt: minute, Status: models.RunStarted,
				WorkflowID: scheduler.WorkflowID(job.ID, minute), RecordedAt: time.Now()}
			if _, err := rt.Store.RecordRun(ctx, run); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		start := time.Now()
		sem := make(chan struct{}, scheduler.DefaultConcurrency)
		var wg sync.WaitGroup
		for _, job := range jobs {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				if err := rt.Cron().Start(ctx, job, minute, scheduler.WorkflowID(job.ID, minute)); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(time.Since(start).Seconds(), "s/1000-starts")
	}
}
