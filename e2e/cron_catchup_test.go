package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/scheduler"
)

// These tests run the scheduler in this process, on a full runtime (the
// embedded Temporal server on SQLite files, the SQLite store, the worker),
// with the ticker's clock set by the test, so that hours of downtime pass
// at once. Each slot that runs is a real CronRunWorkflow whose pre-run
// script appends the job's name to a log and whose answer is delivered to a
// file named after its slot.

// startCronRuntime starts a runtime in a fresh home.
func startCronRuntime(t *testing.T) *engine.Runtime {
	t.Helper()
	model := fakellm.New()
	t.Cleanup(model.Close)
	cfg := config.Default(t.TempDir())
	cfg.Model.BaseURL, cfg.Model.APIKey, cfg.Model.Name = model.URL(), "test", fakellm.DefaultModel
	rt, err := engine.Start(context.Background(), cfg, engine.Options{Worker: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("start runtime: %v", err)
	}
	t.Cleanup(rt.Close)
	return rt
}

// onceAYear keeps a ticker's spec from firing while a test runs: only its
// tick at start ticks.
const onceAYear = "0 0 0 1 1 *"

// schedulerRunsAt starts a scheduler whose clock reads now, waits for its
// tick at start, stops it and returns what that tick did.
func schedulerRunsAt(t *testing.T, rt *engine.Runtime, now time.Time) scheduler.Result {
	t.Helper()
	results := make(chan scheduler.Result, 1)
	tk := scheduler.NewTicker(rt.Store, rt.Cron(), rt.Cron(), scheduler.WithTickSpec(onceAYear),
		scheduler.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		scheduler.WithClock(func() time.Time { return now }),
		scheduler.WithOnTick(func(res scheduler.Result, err error) {
			if err != nil {
				t.Errorf("tick at %s: %v", now.Format(time.TimeOnly), err)
			}
			results <- res
		}))
	if err := tk.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var res scheduler.Result
	select {
	case res = <-results:
	case <-time.After(time.Minute):
		t.Fatalf("the scheduler started at %s did not tick", now.Format(time.TimeOnly))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tk.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 0 {
		t.Fatalf("tick at %s: %v", now.Format(time.TimeOnly), res.Errors)
	}
	return res
}

// addScriptJob adds a job whose run appends its name to log and delivers a
// file per slot.
func addScriptJob(t *testing.T, rt *engine.Runtime, job models.CronJob, log string) {
	t.Helper()
	job.ID, job.Enabled, job.Deliver = job.Name, true, []string{"local"}
	job.PreRunScript = fmt.Sprintf("echo %s >> %s", job.Name, log)
	if _, err := rt.Store.CreateCronJob(context.Background(), job); err != nil {
		t.Fatal(err)
	}
}

// slotRuns is what became of a job's slots: "15:04" by run status.
func slotRuns(t *testing.T, rt *engine.Runtime, job string) map[string][]string {
	t.Helper()
	runs, err := rt.Store.CronRuns(context.Background(), job, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, r := range slices.Backward(runs) {
		out[r.Status] = append(out[r.Status], r.ScheduledAt.UTC().Format("15:04"))
	}
	return out
}

// waitRunsEnded waits until no run of the jobs is still going.
func waitRunsEnded(t *testing.T, rt *engine.Runtime, jobs ...string) {
	t.Helper()
	waitFor(t, 2*time.Minute, func() bool {
		for _, job := range jobs {
			if len(slotRuns(t, rt, job)[models.RunStarted]) != 0 {
				return false
			}
		}
		return true
	})
}

// executions counts the runs of each job that the log shows.
func executions(t *testing.T, log string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, name := range strings.Fields(string(data)) {
		out[name]++
	}
	return out
}

// deliveredSlots lists the slots ("15:04") a job's local deliveries name.
func deliveredSlots(t *testing.T, rt *engine.Runtime, job string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(rt.Config.Home, "cron", "output", job, "*.md"))
	out := []string{}
	for _, f := range files {
		slot, err := time.Parse("2006-01-02T15-04Z", strings.TrimSuffix(filepath.Base(f), ".md"))
		if err != nil {
			t.Fatalf("delivery %s: %v", f, err)
		}
		out = append(out, slot.Format("15:04"))
	}
	slices.Sort(out)
	return out
}

// quarters lists "15:04" every 15 minutes from first to last of the test day.
func quarters(first, last string) []string {
	out := []string{}
	day := "2026-05-01T"
	from, _ := time.Parse(time.RFC3339, day+first+":00Z")
	to, _ := time.Parse(time.RFC3339, day+last+":00Z")
	for m := from; !m.After(to); m = m.Add(15 * time.Minute) {
		out = append(out, m.Format("15:04"))
	}
	return out
}

// TestCronCatchUpAfterThreeHours: jobs every quarter of an hour run their
// 10:00 slot; then no scheduler runs until 13:05. The scheduler that starts
// then handles the twelve slots due meanwhile (10:15 to 13:00) as each
// job's catch-up policy says, in its tick at start: last (also the default)
// runs 13:00 and records the others missed; all runs the four within its
// one-hour window, oldest first, and records the older ones missed, and
// with a three-hour window runs all twelve; none runs none. Each slot that
// runs, runs once (one log line, one delivery); at 13:15 every job runs its
// slot again.
func TestCronCatchUpAfterThreeHours(t *testing.T) {
	t.Parallel()
	rt := startCronRuntime(t)
	log := filepath.Join(t.TempDir(), "runs.log")
	tests := []struct {
		name, policy    string
		window          time.Duration
		started, missed []string
	}{
		{"last", models.CatchUpLast, 0, []string{"13:00"}, quarters("10:15", "12:45")},
		{"default", "", 0, []string{"13:00"}, quarters("10:15", "12:45")},
		{"all", models.CatchUpAll, 0, quarters("12:15", "13:00"), quarters("10:15", "12:00")},
		{"all3h", models.CatchUpAll, 3 * time.Hour, quarters("10:15", "13:00"), []string{}},
		{"none", models.CatchUpNone, 0, []string{}, quarters("10:15", "13:00")},
	}
	day := func(hms string) time.Time {
		at, err := time.Parse(time.RFC3339, "2026-05-01T"+hms+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	names := []string{}
	for _, tt := range tests {
		addScriptJob(t, rt, models.CronJob{Name: tt.name, Schedule: "*/15 * * * *", CatchUp: tt.policy,
			CatchUpWindow: tt.window, CreatedAt: day("09:50:30")}, log)
		names = append(names, tt.name)
	}

	if res := schedulerRunsAt(t, rt, day("10:00:05")); len(res.Started) != len(tests) || len(res.Missed) != 0 {
		t.Fatalf("10:00: started %d, missed %d; want each job's slot", len(res.Started), len(res.Missed))
	}
	waitRunsEnded(t, rt, names...)

	res := schedulerRunsAt(t, rt, day("13:05:02")) // three hours later
	if len(res.Skipped) != 0 {
		t.Fatalf("13:05: skipped %v", res.Skipped)
	}
	waitRunsEnded(t, rt, names...)
	ran := executions(t, log)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := slotRuns(t, rt, tt.name)
			if want := append([]string{"10:00"}, tt.started...); !slices.Equal(runs[models.RunCompleted], want) {
				t.Errorf("completed %v, want %v (runs %v)", runs[models.RunCompleted], want, runs)
			}
			if got := runs[models.RunMissed]; !slices.Equal(got, tt.missed) {
				t.Errorf("missed %v, want %v", got, tt.missed)
			}
			if n := ran[tt.name]; n != 1+len(tt.started) {
				t.Errorf("the job's script ran %d times, want %d", n, 1+len(tt.started))
			}
			if got, want := deliveredSlots(t, rt, tt.name), append([]string{"10:00"}, tt.started...); !slices.Equal(got, want) {
				t.Errorf("delivered %v, want %v", got, want)
			}
		})
	}

	// Back to normal: the next slot runs for every job.
	res = schedulerRunsAt(t, rt, day("13:15:01"))
	if len(res.Started) != len(tests) || len(res.Missed) != 0 {
		t.Fatalf("13:15: started %v, missed %v", res.Started, res.Missed)
	}
	waitRunsEnded(t, rt, names...)
}

// TestCronShortRestartInProcess: a scheduler that ran 10:00 stops at
// 10:00:58 and another starts at 10:01:02. Under each policy the 10:01 slot
// runs at once, in the tick at start, and once; 10:02 follows.
func TestCronShortRestartInProcess(t *testing.T) {
	t.Parallel()
	rt := startCronRuntime(t)
	log := filepath.Join(t.TempDir(), "runs.log")
	policies := []string{models.CatchUpLast, models.CatchUpNone, models.CatchUpAll}
	for _, p := range policies {
		created, _ := time.Parse(time.RFC3339, "2026-05-01T09:59:30Z")
		addScriptJob(t, rt, models.CronJob{Name: "minutely-" + p, Schedule: "* * * * *", CatchUp: p, CreatedAt: created}, log)
	}
	names := []string{"minutely-last", "minutely-none", "minutely-all"}
	for _, now := range []string{"10:00:00", "10:01:02", "10:02:00"} {
		at, _ := time.Parse(time.RFC3339, "2026-05-01T"+now+"Z")
		res := schedulerRunsAt(t, rt, at)
		if len(res.Started) != len(policies) || len(res.Missed)+len(res.Skipped) != 0 {
			t.Fatalf("the scheduler started at %s: started %v, missed %v, skipped %v", now, res.Started, res.Missed, res.Skipped)
		}
		waitRunsEnded(t, rt, names...)
	}
	ran := executions(t, log)
	for _, name := range names {
		runs := slotRuns(t, rt, name)
		if want := []string{"10:00", "10:01", "10:02"}; !slices.Equal(runs[models.RunCompleted], want) || len(runs) != 1 {
			t.Errorf("%s: runs %v, want %v completed", name, runs, want)
		}
		if ran[name] != 3 || !slices.Equal(deliveredSlots(t, rt, name), []string{"10:00", "10:01", "10:02"}) {
			t.Errorf("%s: ran %d times, delivered %v", name, ran[name], deliveredSlots(t, rt, name))
		}
	}
}
