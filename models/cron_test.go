package models

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// openCronStore opens dsn with the cron tables migrated.
func openCronStore(t *testing.T, dsn string) *Store {
	t.Helper()
	s := openStore(t, dsn)
	if err := s.MigrateCron(t.Context()); err != nil {
		t.Fatalf("MigrateCron: %v", err)
	}
	return s
}

func cronJob(id string) CronJob {
	return CronJob{ID: id, Name: "name-" + id, Schedule: "0 9 * * *", Prompt: "report on " + id, Enabled: true}
}

func TestCronJobCreateAndRead(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openCronStore(t, dsn)
		ctx := t.Context()
		// Migrating again is harmless.
		if err := s.MigrateCron(ctx); err != nil {
			t.Fatalf("second MigrateCron: %v", err)
		}
		created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		in := CronJob{
			ID: "j1", Name: "daily", Schedule: "30 2 * * *", TimeZone: "Europe/Berlin",
			Prompt: "summarise", Model: "m", Toolsets: []string{"files", "web"}, MaxIterations: 7,
			PreRunScript: "echo hi", Deliver: []string{"local"}, Enabled: true, CreatedAt: created,
		}
		got, err := s.CreateCronJob(ctx, in)
		if err != nil {
			t.Fatalf("CreateCronJob: %v", err)
		}
		if got.Overlap != OverlapSkip || got.CatchUp != CatchUpLast || got.CatchUpWindow != DefaultCatchUpWindow {
			t.Errorf("defaults = %q %q %s", got.Overlap, got.CatchUp, got.CatchUpWindow)
		}
		for _, key := range []string{"j1", "daily"} {
			read, err := s.CronJob(ctx, key)
			if err != nil {
				t.Fatalf("CronJob(%q): %v", key, err)
			}
			if read.ID != "j1" || read.TimeZone != "Europe/Berlin" || !slices.Equal(read.Toolsets, in.Toolsets) ||
				!slices.Equal(read.Deliver, in.Deliver) || read.MaxIterations != 7 || !read.Enabled ||
				!read.CreatedAt.Equal(created) || read.LastScheduled != nil || read.CatchUpWindow != time.Hour {
				t.Errorf("CronJob(%q) = %+v", key, read)
			}
		}
		if _, err := s.CronJob(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("CronJob(nope) error = %v, want ErrNotFound", err)
		}
	})
}

func TestCronJobValidation(t *testing.T) {
	long := string(make([]byte, 129))
	tests := []struct {
		name   string
		mutate func(*CronJob)
		want   error
	}{
		{"no id", func(j *CronJob) { j.ID = "" }, ErrInvalidArgument},
		{"long id", func(j *CronJob) { j.ID = long }, ErrInvalidArgument},
		{"no name", func(j *CronJob) { j.Name = "" }, ErrInvalidArgument},
		{"no schedule", func(j *CronJob) { j.Schedule = "" }, ErrInvalidArgument},
		{"bad overlap", func(j *CronJob) { j.Overlap = "queue" }, ErrInvalidArgument},
		{"bad catch-up", func(j *CronJob) { j.CatchUp = "some" }, ErrInvalidArgument},
		{"negative window", func(j *CronJob) { j.CatchUpWindow = -time.Minute }, ErrInvalidArgument},
		{"negative iterations", func(j *CronJob) { j.MaxIterations = -1 }, ErrInvalidArgument},
		{"duplicate id", func(j *CronJob) { j.ID = "taken"; j.Name = "other" }, ErrCronJobExists},
		{"duplicate name", func(j *CronJob) { j.Name = "name-taken" }, ErrCronJobExists},
	}
	eachDB(t, func(t *testing.T, dsn string) {
		s := openCronStore(t, dsn)
		if _, err := s.CreateCronJob(t.Context(), cronJob("taken")); err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				job := cronJob("fresh")
				tt.mutate(&job)
				if _, err := s.CreateCronJob(t.Context(), job); !errors.Is(err, tt.want) {
					t.Errorf("CreateCronJob error = %v, want %v", err, tt.want)
				}
			})
		}
		jobs, err := s.CronJobs(t.Context())
		if err != nil || len(jobs) != 1 {
			t.Errorf("CronJobs = %d jobs, %v; want only the first", len(jobs), err)
		}
	})
}

func TestCronJobUpdateEnableDelete(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openCronStore(t, dsn)
		ctx := t.Context()
		for _, id := range []string{"b", "a", "c"} {
			if _, err := s.CreateCronJob(ctx, cronJob(id)); err != nil {
				t.Fatal(err)
			}
		}
		slot := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
		if err := s.AdvanceJob(ctx, "a", slot); err != nil {
			t.Fatal(err)
		}
		job, _ := s.CronJob(ctx, "a")
		job.Schedule = "every 2h"
		job.Overlap = OverlapAllow
		job.LastScheduled = nil // ignored by UpdateCronJob
		job.CreatedAt = time.Time{}
		if err := s.UpdateCronJob(ctx, *job); err != nil {
			t.Fatalf("UpdateCronJob: %v", err)
		}
		got, _ := s.CronJob(ctx, "a")
		if got.Schedule != "every 2h" || got.Overlap != OverlapAllow || got.LastScheduled == nil ||
			!got.LastScheduled.Equal(slot) || got.CreatedAt.IsZero() {
			t.Errorf("after update: %+v", got)
		}
		job.Name = "name-b"
		if err := s.UpdateCronJob(ctx, *job); !errors.Is(err, ErrCronJobExists) {
			t.Errorf("rename onto another job: %v, want ErrCronJobExists", err)
		}
		missing := cronJob("zzz")
		if err := s.UpdateCronJob(ctx, missing); !errors.Is(err, ErrNotFound) {
			t.Errorf("update missing: %v, want ErrNotFound", err)
		}

		if err := s.SetCronJobEnabled(ctx, "name-b", false); err != nil {
			t.Fatal(err)
		}
		enabled, err := s.EnabledCronJobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ids := jobIDs(enabled); !slices.Equal(ids, []string{"a", "c"}) {
			t.Errorf("EnabledCronJobs = %v", ids)
		}
		all, _ := s.CronJobs(ctx)
		if ids := jobIDs(all); !slices.Equal(ids, []string{"a", "b", "c"}) {
			t.Errorf("CronJobs = %v, want ordered by name", ids)
		}

		if _, err := s.RecordRun(ctx, CronRun{JobID: "a", ScheduledAt: slot, Status: RunStarted}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteCronJob(ctx, "name-a"); err != nil {
			t.Fatalf("DeleteCronJob: %v", err)
		}
		if runs, _ := s.CronRuns(ctx, "a", 0); len(runs) != 0 {
			t.Errorf("runs left after delete: %v", runs)
		}
		if err := s.DeleteCronJob(ctx, "a"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second delete: %v, want ErrNotFound", err)
		}
		if err := s.SetCronJobEnabled(ctx, "a", true); !errors.Is(err, ErrNotFound) {
			t.Errorf("enable deleted: %v, want ErrNotFound", err)
		}
	})
}

func jobIDs(jobs []CronJob) []string {
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

func TestCronRunRecordOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openCronStore(t, dsn)
		ctx := t.Context()
		if _, err := s.CreateCronJob(ctx, cronJob("j")); err != nil {
			t.Fatal(err)
		}
		berlin, _ := time.LoadLocation("Europe/Berlin")
		slot := time.Date(2026, 5, 1, 11, 0, 0, 0, berlin) // 09:00 UTC

		// Many callers record the same slot at once: exactly one creates it.
		const callers = 16
		var wg sync.WaitGroup
		results := make([]bool, callers)
		errs := make([]error, callers)
		for i := range callers {
			wg.Go(func() {
				results[i], errs[i] = s.RecordRun(ctx, CronRun{JobID: "j", ScheduledAt: slot, Status: RunStarted,
					WorkflowID: fmt.Sprintf("caller-%d", i)})
			})
		}
		wg.Wait()
		created := 0
		for i := range callers {
			if errs[i] != nil {
				t.Fatalf("RecordRun %d: %v", i, errs[i])
			}
			if results[i] {
				created++
			}
		}
		if created != 1 {
			t.Fatalf("%d callers created the run, want 1", created)
		}
		// The same instant in UTC is the same slot.
		again, err := s.RecordRun(ctx, CronRun{JobID: "j", ScheduledAt: slot.UTC(), Status: RunMissed})
		if err != nil || again {
			t.Errorf("RecordRun of the same slot in UTC = %t, %v; want false", again, err)
		}
		run, err := s.CronRun(ctx, "j", slot.UTC())
		if err != nil || run.Status != RunStarted || run.StartedAt != nil {
			t.Fatalf("CronRun = %+v, %v", run, err)
		}

		started := slot.Add(3 * time.Second)
		if err := s.MarkRunStarted(ctx, "j", slot, started); err != nil {
			t.Fatal(err)
		}
		if err := s.MarkRunStarted(ctx, "j", slot, started.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.MarkRunStarted(ctx, "j", slot.Add(time.Minute), started); !errors.Is(err, ErrNotFound) {
			t.Errorf("MarkRunStarted of a missing run: %v, want ErrNotFound", err)
		}
		run, _ = s.CronRun(ctx, "j", slot)
		if run.StartedAt == nil || !run.StartedAt.Equal(started) {
			t.Errorf("StartedAt = %v, want the first mark %v", run.StartedAt, started)
		}

		ended := started.Add(time.Minute)
		run.Status, run.EndedAt, run.ExitReason, run.Delivery = RunCompleted, &ended, "text_response", "local: ok"
		if err := s.UpdateRun(ctx, *run); err != nil {
			t.Fatal(err)
		}
		got, _ := s.CronRun(ctx, "j", slot)
		if got.Status != RunCompleted || got.EndedAt == nil || !got.EndedAt.Equal(ended) ||
			got.ExitReason != "text_response" || got.Delivery != "local: ok" || got.WorkflowID != run.WorkflowID {
			t.Errorf("after UpdateRun: %+v", got)
		}
		if err := s.UpdateRun(ctx, CronRun{JobID: "j", ScheduledAt: slot.Add(time.Hour), Status: RunFailed}); !errors.Is(err, ErrNotFound) {
			t.Errorf("UpdateRun of a missing run: %v, want ErrNotFound", err)
		}
		for _, bad := range []CronRun{
			{ScheduledAt: slot, Status: RunStarted},
			{JobID: "j", Status: RunStarted},
			{JobID: "j", ScheduledAt: slot, Status: "done"},
		} {
			if _, err := s.RecordRun(ctx, bad); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("RecordRun(%+v) = %v, want ErrInvalidArgument", bad, err)
			}
		}
	})
}

func TestCronRunsNewestFirst(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openCronStore(t, dsn)
		ctx := t.Context()
		base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		for _, h := range []int{3, 1, 12, 2} {
			if _, err := s.RecordRun(ctx, CronRun{JobID: "j", ScheduledAt: base.Add(time.Duration(h) * time.Hour), Status: RunMissed}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.RecordRun(ctx, CronRun{JobID: "other", ScheduledAt: base, Status: RunMissed}); err != nil {
			t.Fatal(err)
		}
		runs, err := s.CronRuns(ctx, "j", 3)
		if err != nil {
			t.Fatal(err)
		}
		var hours []int
		for _, r := range runs {
			hours = append(hours, int(r.ScheduledAt.Sub(base)/time.Hour))
		}
		if !slices.Equal(hours, []int{12, 3, 2}) {
			t.Errorf("CronRuns hours = %v, want [12 3 2]", hours)
		}
		if all, _ := s.CronRuns(ctx, "j", 0); len(all) != 4 {
			t.Errorf("CronRuns without limit = %d runs, want 4", len(all))
		}
	})
}

func TestCronAdvanceJobNeverGoesBack(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openCronStore(t, dsn)
		ctx := t.Context()
		if _, err := s.CreateCronJob(ctx, cronJob("j")); err != nil {
			t.Fatal(err)
		}
		base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
		steps := []struct {
			slot time.Time
			want time.Time
		}{
			{base, base},
			{base.Add(2 * time.Minute), base.Add(2 * time.Minute)},
			{base.Add(time.Minute), base.Add(2 * time.Minute)},
			{base.Add(2 * time.Minute), base.Add(2 * time.Minute)},
			{base.Add(10 * time.Hour), base.Add(10 * time.Hour)},
		}
		for i, st := range steps {
			if err := s.AdvanceJob(ctx, "j", st.slot); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			job, _ := s.CronJob(ctx, "j")
			if job.LastScheduled == nil || !job.LastScheduled.Equal(st.want) {
				t.Errorf("step %d: LastScheduled = %v, want %v", i, job.LastScheduled, st.want)
			}
		}
		if err := s.AdvanceJob(ctx, "missing", base); !errors.Is(err, ErrNotFound) {
			t.Errorf("AdvanceJob(missing) = %v, want ErrNotFound", err)
		}
	})
}

// TestLegacyCronJobsGetAnOwner: a job a chat made before jobs had owners
// (an origin, no owner) gets the legacy owner of its origin when the store
// is migrated, so its runs never search as the operator; the operator's
// jobs (no origin) and owned jobs are left as they are.
func TestLegacyCronJobsGetAnOwner(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openCronStore(t, dsn)
		ctx := t.Context()
		for _, j := range []CronJob{
			{ID: "legacy", Origin: "telegram:42"},
			{ID: "operator"},
			{ID: "owned", Origin: "telegram:43", Owner: "telegram:dm:43"},
		} {
			job := cronJob(j.ID)
			job.Origin, job.Owner = j.Origin, j.Owner
			if _, err := s.CreateCronJob(ctx, job); err != nil {
				t.Fatal(err)
			}
		}
		// As a store from before owners left it.
		if err := s.db.Exec("UPDATE cron_jobs SET owner = '' WHERE id = 'legacy'").Error; err != nil {
			t.Fatal(err)
		}
		if err := s.MigrateCron(ctx); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]string{"legacy": LegacyOwnerPrefix + "telegram:42", "operator": "", "owned": "telegram:dm:43"} {
			got, err := s.CronJob(ctx, id)
			if err != nil || got.Owner != want {
				t.Errorf("job %s: owner %q (%v), want %q", id, got.Owner, err, want)
			}
		}
	})
}
