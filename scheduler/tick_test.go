package scheduler

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/talaria-agent/talaria/internal/pgtest"
	"github.com/talaria-agent/talaria/models"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// eachDB runs fn once per database, as subtests "sqlite" and "postgres",
// each given the DSN of a fresh database of its own.
func eachDB(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, filepath.Join(t.TempDir(), "talaria.db")) })
	t.Run("postgres", func(t *testing.T) { fn(t, pgtest.DSN(t, "sched")) })
}

// openStore opens dsn with the cron tables and closes it when the test ends.
func openStore(t *testing.T, dsn string) *models.Store {
	t.Helper()
	st, err := models.Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.MigrateCron(t.Context()); err != nil {
		t.Fatalf("MigrateCron: %v", err)
	}
	return st
}

// fakeTemporal stands in for Temporal: starting a workflow id twice starts
// it once, as a duplicate-rejecting id reuse policy does.
type fakeTemporal struct {
	mu         sync.Mutex
	calls      int
	started    map[string]time.Time // workflow id → slot
	fail       map[string]error     // job id → Start error
	running    map[string]bool      // job id → a run is going
	runningErr map[string]error     // job id → IsRunning error
}

func newFakeTemporal() *fakeTemporal {
	return &fakeTemporal{started: map[string]time.Time{}, fail: map[string]error{},
		running: map[string]bool{}, runningErr: map[string]error{}}
}

func (f *fakeTemporal) Start(_ context.Context, job models.CronJob, slot time.Time, workflowID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if err := f.fail[job.ID]; err != nil {
		return err
	}
	if workflowID != WorkflowID(job.ID, slot) {
		return fmt.Errorf("workflow id %q for job %s slot %s", workflowID, job.ID, slot)
	}
	if _, ok := f.started[workflowID]; !ok {
		f.started[workflowID] = slot
	}
	return nil
}

func (f *fakeTemporal) IsRunning(_ context.Context, job models.CronJob) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.runningErr[job.ID]; err != nil {
		return false, err
	}
	return f.running[job.ID], nil
}

func (f *fakeTemporal) set(fn func(f *fakeTemporal)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeTemporal) counts() (calls, started int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, len(f.started)
}

// day is the date of the Tick tests; at("10:00") is a minute of it in UTC.
const day = "2026-05-01T"

func at(t *testing.T, hhmm string) time.Time { return mustTime(t, day+hhmm+":00Z") }

// tickAt ticks the minute hhmm with a clock 5 seconds into it.
func tickAt(t *testing.T, st Store, f *fakeTemporal, hhmm string, opts ...Option) Result {
	t.Helper()
	now := at(t, hhmm)
	clock := func() time.Time { return now.Add(5 * time.Second) }
	res, err := Tick(t.Context(), st, f, f, now, append([]Option{WithClock(clock)}, opts...)...)
	if err != nil {
		t.Fatalf("Tick %s: %v", hhmm, err)
	}
	return res
}

func createJob(t *testing.T, st *models.Store, job models.CronJob) {
	t.Helper()
	if job.Name == "" {
		job.Name = job.ID
	}
	if _, err := st.CreateCronJob(t.Context(), job); err != nil {
		t.Fatalf("CreateCronJob %s: %v", job.ID, err)
	}
}

// refs renders slot references as "job@15:04", sorted.
func refs(rs []SlotRef) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.JobID+"@"+r.Slot.UTC().Format("15:04"))
	}
	slices.Sort(out)
	return out
}

// jobRefs renders the slot references of one job.
func jobRefs(rs []SlotRef, jobID string) []string {
	out := []string{}
	for _, r := range rs {
		if r.JobID == jobID {
			out = append(out, r.Slot.UTC().Format("15:04"))
		}
	}
	return out
}

// minutes lists "15:04" from first to last every step.
func minutes(t *testing.T, first, last string, step time.Duration) []string {
	out := []string{}
	for m := at(t, first); !m.After(at(t, last)); m = m.Add(step) {
		out = append(out, m.Format("15:04"))
	}
	return out
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

func TestTickDueAndNotDue(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		st := openStore(t, dsn)
		f := newFakeTemporal()
		created := mustTime(t, day+"08:00:30Z")
		createJob(t, st, models.CronJob{ID: "utc9", Schedule: "0 9 * * *", Enabled: true, CreatedAt: created})
		createJob(t, st, models.CronJob{ID: "tokyo18", Schedule: "0 18 * * *", TimeZone: "Asia/Tokyo", Enabled: true, CreatedAt: created})
		createJob(t, st, models.CronJob{ID: "ny5", Schedule: "CRON_TZ=America/New_York 0 5 * * *", Enabled: true, CreatedAt: created})
		createJob(t, st, models.CronJob{ID: "off", Schedule: "* * * * *", Enabled: false, CreatedAt: created})

		steps := []struct {
			minute  string
			started []string
		}{
			{"08:59", []string{}},
			{"09:00", []string{"tokyo18@09:00", "ny5@09:00", "utc9@09:00"}},
			{"09:00", []string{}}, // the same minute again
			{"09:01", []string{}},
			{"10:00", []string{}},
		}
		for _, step := range steps {
			res := tickAt(t, st, f, step.minute)
			want := slices.Clone(step.started)
			slices.Sort(want)
			if got := refs(res.Started); !equal(got, want) || len(res.Skipped)+len(res.Missed)+len(res.Errors) != 0 {
				t.Errorf("tick %s: started %v, skipped %v, missed %v, errors %v; want started %v",
					step.minute, got, res.Skipped, res.Missed, res.Errors, want)
			}
		}
		if calls, started := f.counts(); calls != 3 || started != 3 {
			t.Errorf("Starter: %d calls, %d workflows; want 3 and 3", calls, started)
		}
		runs, err := st.CronRuns(t.Context(), "utc9", 0)
		if err != nil || len(runs) != 1 {
			t.Fatalf("runs of utc9 = %v, %v", runs, err)
		}
		r := runs[0]
		if r.Status != models.RunStarted || r.WorkflowID != "cron/utc9/2026-05-01T09:00:00Z" ||
			r.StartedAt == nil || !r.StartedAt.Equal(at(t, "09:00").Add(5*time.Second)) {
			t.Errorf("run = %+v", r)
		}
		job, _ := st.CronJob(t.Context(), "utc9")
		if job.LastScheduled == nil || !job.LastScheduled.Equal(at(t, "09:00")) || !job.Enabled {
			t.Errorf("job after its slot: LastScheduled %v, enabled %t", job.LastScheduled, job.Enabled)
		}
	})
}

func TestTickOneShotRunsOnceThenIsDisabled(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		st := openStore(t, dsn)
		f := newFakeTemporal()
		createJob(t, st, models.CronJob{ID: "in30", Schedule: "in 30m", Enabled: true, CreatedAt: mustTime(t, day+"10:00:20Z")})
		createJob(t, st, models.CronJob{ID: "noon", Schedule: "2026-05-01T14:00:00+02:00", Enabled: true, CreatedAt: at(t, "10:00")})

		steps := []struct {
			minute, started string
			enabled         []string
		}{
			{"10:30", "", []string{"in30", "noon"}},
			{"10:31", "in30@10:31", []string{"noon"}},
			{"10:32", "", []string{"noon"}},
			{"11:59", "", []string{"noon"}},
			{"12:00", "noon@12:00", []string{}},
			{"12:01", "", []string{}},
		}
		for _, step := range steps {
			res := tickAt(t, st, f, step.minute)
			if got := strings.Join(refs(res.Started), ","); got != step.started || len(res.Errors) != 0 {
				t.Errorf("tick %s: started %q, errors %v; want %q", step.minute, got, res.Errors, step.started)
			}
			jobs, err := st.EnabledCronJobs(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			ids := []string{}
			for _, j := range jobs {
				ids = append(ids, j.ID)
			}
			if !equal(ids, step.enabled) {
				t.Errorf("after tick %s enabled jobs = %v, want %v", step.minute, ids, step.enabled)
			}
		}
		// Enabled again, a one-shot past its slot stays done.
		if err := st.SetCronJobEnabled(t.Context(), "in30", true); err != nil {
			t.Fatal(err)
		}
		if res := tickAt(t, st, f, "12:02"); len(res.Started)+len(res.Missed)+len(res.Errors) != 0 {
			t.Errorf("re-enabled one-shot: %+v", res)
		}
		if calls, _ := f.counts(); calls != 2 {
			t.Errorf("Starter called %d times, want 2", calls)
		}
	})
}

// TestTickCatchUpAfterDowntime stops ticking after 09:00 and resumes at
// 12:05, three hours later, with jobs every quarter of an hour.
func TestTickCatchUpAfterDowntime(t *testing.T) {
	tests := []struct {
		id, policy      string
		window          time.Duration
		started, missed []string
	}{
		{"none", models.CatchUpNone, 0, []string{}, minutes(t, "09:15", "12:00", 15*time.Minute)},
		{"last", models.CatchUpLast, 0, []string{"12:00"}, minutes(t, "09:15", "11:45", 15*time.Minute)},
		{"default", "", 0, []string{"12:00"}, minutes(t, "09:15", "11:45", 15*time.Minute)},
		{"all", models.CatchUpAll, 0, minutes(t, "11:15", "12:00", 15*time.Minute), minutes(t, "09:15", "11:00", 15*time.Minute)},
		{"all2h", models.CatchUpAll, 2 * time.Hour, minutes(t, "10:15", "12:00", 15*time.Minute), minutes(t, "09:15", "10:00", 15*time.Minute)},
		{"last3h", models.CatchUpLast, 3 * time.Hour, []string{"12:00"}, minutes(t, "09:15", "11:45", 15*time.Minute)},
	}
	eachDB(t, func(t *testing.T, dsn string) {
		st := openStore(t, dsn)
		f := newFakeTemporal()
		for _, tt := range tests {
			createJob(t, st, models.CronJob{ID: tt.id, Schedule: "*/15 * * * *", Enabled: true, CatchUp: tt.policy,
				CatchUpWindow: tt.window, CreatedAt: mustTime(t, day+"08:50:30Z")})
		}
		if res := tickAt(t, st, f, "09:00"); len(res.Started) != len(tests) {
			t.Fatalf("09:00 started %v, want every job", refs(res.Started))
		}

		res := tickAt(t, st, f, "12:05")
		if len(res.Errors) != 0 || len(res.Skipped) != 0 {
			t.Fatalf("12:05: errors %v, skipped %v", res.Errors, res.Skipped)
		}
		for _, tt := range tests {
			t.Run(tt.id, func(t *testing.T) {
				if got := jobRefs(res.Started, tt.id); !equal(got, tt.started) {
					t.Errorf("started %v, want %v", got, tt.started)
				}
				if got := jobRefs(res.Missed, tt.id); !equal(got, tt.missed) {
					t.Errorf("missed %v, want %v", got, tt.missed)
				}
				runs, err := st.CronRuns(t.Context(), tt.id, 0)
				if err != nil {
					t.Fatal(err)
				}
				byStatus := map[string][]string{}
				for _, r := range slices.Backward(runs) {
					byStatus[r.Status] = append(byStatus[r.Status], r.ScheduledAt.UTC().Format("15:04"))
				}
				if want := append([]string{"09:00"}, tt.started...); !equal(byStatus[models.RunStarted], want) {
					t.Errorf("runs started %v, want %v", byStatus[models.RunStarted], want)
				}
				if !equal(byStatus[models.RunMissed], tt.missed) || len(runs) != 1+len(tt.started)+len(tt.missed) {
					t.Errorf("runs missed %v, want %v (%d runs)", byStatus[models.RunMissed], tt.missed, len(runs))
				}
				job, _ := st.CronJob(t.Context(), tt.id)
				if job.LastScheduled == nil || !job.LastScheduled.Equal(at(t, "12:00")) {
					t.Errorf("LastScheduled = %v, want 12:00", job.LastScheduled)
				}
			})
		}

		// Back to normal: each job runs its next slot.
		res = tickAt(t, st, f, "12:15")
		if got := refs(res.Started); len(got) != len(tests) || len(res.Missed) != 0 {
			t.Errorf("12:15 started %v, missed %v", got, refs(res.Missed))
		}
	})
}

func TestTickMissedRecordsAreBounded(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		st := openStore(t, dsn)
		f := newFakeTemporal()
		createJob(t, st, models.CronJob{ID: "minutely", Schedule: "* * * * *", Enabled: true,
			CatchUpWindow: 10 * time.Minute, CreatedAt: mustTime(t, day+"00:00:30Z")})
		res := tickAt(t, st, f, "12:00", WithMaxMissed(50))
		// 12:00 runs, 11:50..11:59 are within the window, and of the 710
		// older slots the latest 50 are recorded.
		if got := jobRefs(res.Started, "minutely"); !equal(got, []string{"12:00"}) {
			t.Errorf("started %v", got)
		}
		if want := minutes(t, "11:00", "11:59", time.Minute); !equal(jobRefs(res.Missed, "minutely"), want) {
			t.Errorf("missed %v, want %v", jobRefs(res.Missed, "minutely"), want)
		}
		job, _ := st.CronJob(t.Context(), "minutely")
		if !job.LastScheduled.Equal(at(t, "12:00")) {
			t.Errorf("LastScheduled = %v", job.LastScheduled)
		}
	})
}

func TestTickOverlap(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		st := openStore(t, dsn)
		f := newFakeTemporal()
		created := mustTime(t, day+"09:59:30Z")
		createJob(t, st, models.CronJob{ID: "skip", Schedule: "* * * * *", Enabled: true, CreatedAt: created})
		createJob(t, st, models.CronJob{ID: "allow", Schedule: "* * * * *", Enabled: true, Overlap: models.OverlapAllow, CreatedAt: created})
		createJob(t, st, models.CronJob{ID: "skipall", Schedule: "* * * * *", Enabled: true, CatchUp: models.CatchUpAll,
			CreatedAt: mustTime(t, day+"09:57:30Z")})
		f.set(func(f *fakeTemporal) { f.running["skip"], f.running["allow"], f.running["skipall"] = true, true, true })

		res := tickAt(t, st, f, "10:00")
		if got := refs(res.Skipped); !equal(got, []string{"skip@10:00", "skipall@09:58", "skipall@09:59", "skipall@10:00"}) {
			t.Errorf("skipped %v", got)
		}
		if got := refs(res.Started); !equal(got, []string{"allow@10:00"}) {
			t.Errorf("started %v", got)
		}
		run, err := st.CronRun(t.Context(), "skip", at(t, "10:00"))
		if err != nil || run.Status != models.RunSkipped || run.WorkflowID != "" || run.StartedAt != nil {
			t.Errorf("skipped run = %+v, %v", run, err)
		}

		f.set(func(f *fakeTemporal) { f.running["skip"], f.running["skipall"] = false, false })
		res = tickAt(t, st, f, "10:01")
		if got := refs(res.Started); !equal(got, []string{"allow@10:01", "skip@10:01", "skipall@10:01"}) || len(res.Skipped) != 0 {
			t.Errorf("10:01 started %v, skipped %v", got, refs(res.Skipped))
		}
	})
}

// TestTickReplicasStartEachSlotOnce ticks the same minute from two
// schedulers, each with its own connection to the database, at once.
func TestTickReplicasStartEachSlotOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		st1, st2 := openStore(t, dsn), openStore(t, dsn)
		f := newFakeTemporal()
		const jobs = 100
		for i := range jobs {
			createJob(t, st1, models.CronJob{ID: fmt.Sprintf("job%03d", i), Schedule: "* * * * *", Enabled: true,
				CreatedAt: mustTime(t, day+"09:59:30Z")})
		}
		results := make([]Result, 2)
		var wg sync.WaitGroup
		for i, st := range []Store{st1, st2} {
			wg.Go(func() { results[i] = tickAt(t, st, f, "10:00") })
		}
		wg.Wait()
		started := map[string]int{}
		for _, res := range results {
			if len(res.Errors) != 0 || len(res.Skipped)+len(res.Missed) != 0 {
				t.Fatalf("result %+v", res)
			}
			for _, r := range refs(res.Started) {
				started[r]++
			}
		}
		calls, workflows := f.counts()
		if len(started) != jobs || calls != jobs || workflows != jobs {
			t.Errorf("%d slots started, %d Start calls, %d workflows; want %d each", len(started), calls, workflows, jobs)
		}
		for r, n := range started {
			if n != 1 {
				t.Errorf("%s reported started by %d replicas", r, n)
			}
		}
		t.Logf("replica 1 started %d, replica 2 started %d", len(results[0].Started), len(results[1].Started))

		// A retried tick of the same minute starts nothing.
		if res := tickAt(t, st2, f, "10:00"); len(res.Started) != 0 {
			t.Errorf("retried tick started %v", refs(res.Started))
		}
		if calls, _ := f.counts(); calls != jobs {
			t.Errorf("Start calls after the retried tick = %d", calls)
		}
	})
}

func TestTickErrorsAreIsolated(t *testing.T) {
	errTemporal := errors.New("temporal unavailable")
	eachDB(t, func(t *testing.T, dsn string) {
		st := openStore(t, dsn)
		f := newFakeTemporal()
		created := mustTime(t, day+"09:59:30Z")
		for _, id := range []string{"ok1", "fails", "stale", "busyerr", "ok2"} {
			createJob(t, st, models.CronJob{ID: id, Schedule: "* * * * *", Enabled: true, CreatedAt: created})
		}
		createJob(t, st, models.CronJob{ID: "bad", Schedule: "every fortnight", Enabled: true, CreatedAt: created})
		f.set(func(f *fakeTemporal) {
			f.fail["fails"], f.fail["stale"] = errTemporal, errTemporal
			f.runningErr["busyerr"] = errTemporal
		})

		res := tickAt(t, st, f, "10:00")
		if got := refs(res.Started); !equal(got, []string{"ok1@10:00", "ok2@10:00"}) {
			t.Errorf("started %v", got)
		}
		failed := map[string]error{}
		for _, err := range res.Errors {
			var je *JobError
			if !errors.As(err, &je) {
				t.Fatalf("error %v is not a *JobError", err)
			}
			failed[je.JobID] = err
		}
		if len(failed) != 4 || !errors.Is(failed["bad"], ErrInvalidSchedule) || !errors.Is(failed["fails"], errTemporal) ||
			!errors.Is(failed["stale"], errTemporal) || !errors.Is(failed["busyerr"], errTemporal) {
			t.Errorf("errors %v", res.Errors)
		}
		if job, _ := st.CronJob(t.Context(), "fails"); job.LastScheduled != nil {
			t.Errorf("failed job advanced to %v", job.LastScheduled)
		}

		// Another replica ticking the same minute leaves a start that may
		// still be going alone.
		f.set(func(f *fakeTemporal) { delete(f.fail, "fails") })
		if res := tickAt(t, st, f, "10:00"); len(jobRefs(res.Started, "fails")) != 0 {
			t.Errorf("start within the grace retried: %v", refs(res.Started))
		}

		// The next minute retries the failed start, then runs its own slot.
		f.set(func(f *fakeTemporal) { delete(f.runningErr, "busyerr") })
		res = tickAt(t, st, f, "10:01")
		if got := jobRefs(res.Started, "fails"); !equal(got, []string{"10:00", "10:01"}) {
			t.Errorf("fails started %v, want the retried 10:00 and 10:01", got)
		}
		if got := jobRefs(res.Started, "busyerr"); !equal(got, []string{"10:01"}) {
			t.Errorf("busyerr started %v (missed %v)", got, jobRefs(res.Missed, "busyerr"))
		}
		for _, slot := range []string{"10:00", "10:01"} {
			run, err := st.CronRun(t.Context(), "fails", at(t, slot))
			if err != nil || run.Status != models.RunStarted || run.StartedAt == nil {
				t.Errorf("run of fails at %s = %+v, %v", slot, run, err)
			}
		}

		// A start that stays unconfirmed past the catch-up window is missed.
		f.set(func(f *fakeTemporal) { delete(f.fail, "stale") })
		res = tickAt(t, st, f, "11:30")
		if got := jobRefs(res.Started, "stale"); !equal(got, []string{"11:30"}) {
			t.Errorf("stale started %v", got)
		}
		if got := jobRefs(res.Missed, "stale"); len(got) != 90 || got[0] != "10:00" {
			t.Errorf("stale missed %d slots from %v", len(got), got[:min(len(got), 1)])
		}
		run, err := st.CronRun(t.Context(), "stale", at(t, "10:00"))
		if err != nil || run.Status != models.RunMissed || run.Error == "" {
			t.Errorf("stale 10:00 run = %+v, %v", run, err)
		}
		if _, ok := f.started[WorkflowID("stale", at(t, "10:00"))]; ok {
			t.Error("the stale slot was started")
		}
	})
}

// TestTickDSTFallBack ticks every minute through the night New York falls
// back: a job at 01:30 runs once.
func TestTickDSTFallBack(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		st := openStore(t, dsn)
		f := newFakeTemporal()
		createJob(t, st, models.CronJob{ID: "ny", Schedule: "30 1 * * *", TimeZone: "America/New_York", Enabled: true,
			CreatedAt: mustTime(t, "2026-10-31T12:00:00Z")})
		createJob(t, st, models.CronJob{ID: "berlin", Schedule: "CRON_TZ=Europe/Berlin 30 2 * * *", Enabled: true,
			CreatedAt: mustTime(t, "2026-03-28T12:00:00Z")})
		var started []string
		tickRange := func(from, to string) {
			for m := mustTime(t, from); !m.After(mustTime(t, to)); m = m.Add(time.Minute) {
				res, err := Tick(t.Context(), st, f, f, m)
				if err != nil || len(res.Errors) != 0 || len(res.Missed) != 0 {
					t.Fatalf("tick %s: %+v, %v", m, res, err)
				}
				for _, r := range res.Started {
					started = append(started, r.JobID+"@"+r.Slot.Format(time.RFC3339))
				}
			}
		}
		tickRange("2026-03-29T00:00:00Z", "2026-03-29T02:00:00Z") // Berlin springs forward at 01:00 UTC
		if err := st.SetCronJobEnabled(t.Context(), "berlin", false); err != nil {
			t.Fatal(err)
		}
		tickRange("2026-11-01T04:00:00Z", "2026-11-01T08:00:00Z") // New York falls back at 06:00 UTC
		want := []string{"berlin@2026-03-29T01:00:00Z", "ny@2026-11-01T05:30:00Z"}
		if !equal(started, want) {
			t.Errorf("started %v, want %v", started, want)
		}
	})
}
