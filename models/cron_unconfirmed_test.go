package models

import (
	"testing"
	"time"
)

// TestUnconfirmedRuns: only "started" runs without a start time, recorded
// before the cut, oldest first.
func TestUnconfirmedRuns(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openCronStore(t, dsn)
		ctx := t.Context()
		cut := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		at := func(min int) time.Time { return cut.Add(time.Duration(min) * time.Minute) }
		for _, r := range []CronRun{
			{JobID: "j", ScheduledAt: at(-30), Status: RunStarted, RecordedAt: at(-30)},   // listed, second
			{JobID: "j", ScheduledAt: at(-40), Status: RunStarted, RecordedAt: at(-40)},   // listed, first
			{JobID: "j", ScheduledAt: at(-20), Status: RunStarted, RecordedAt: at(1)},     // too young
			{JobID: "j", ScheduledAt: at(-10), Status: RunCompleted, RecordedAt: at(-10)}, // ended
			{JobID: "k", ScheduledAt: at(-50), Status: RunStarted, RecordedAt: at(-50)},   // confirmed below
		} {
			if _, err := s.RecordRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.MarkRunStarted(ctx, "k", at(-50), at(-49)); err != nil {
			t.Fatal(err)
		}
		runs, err := s.UnconfirmedRuns(ctx, cut)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 2 || !runs[0].ScheduledAt.Equal(at(-40)) || !runs[1].ScheduledAt.Equal(at(-30)) {
			t.Fatalf("UnconfirmedRuns = %+v", runs)
		}
	})
}
