package models

import (
	"testing"
	"time"
)

func TestSchedulerBeats(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		if at, err := s.LatestSchedulerBeat(ctx); err != nil || !at.IsZero() {
			t.Fatalf("no scheduler yet: %v %v", at, err)
		}
		t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		steps := []struct {
			id   string
			at   time.Time
			want time.Time
		}{
			{"a/1", t0, t0},
			{"b/2", t0.Add(time.Minute), t0.Add(time.Minute)},
			{"a/1", t0.Add(3 * time.Minute), t0.Add(3 * time.Minute)}, // the same scheduler again
			{"b/2", t0.Add(2 * time.Minute), t0.Add(3 * time.Minute)}, // the latest of all wins
		}
		for _, st := range steps {
			if err := s.RecordSchedulerBeat(ctx, st.id, st.at); err != nil {
				t.Fatal(err)
			}
			if got, err := s.LatestSchedulerBeat(ctx); err != nil || !got.Equal(st.want) {
				t.Fatalf("after %s at %s: latest %s (%v), want %s", st.id, st.at, got, err, st.want)
			}
		}
		// A week later, the silent schedulers are forgotten.
		if err := s.RecordSchedulerBeat(ctx, "c/3", t0.Add(8*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := s.db.Model(&SchedulerBeat{}).Count(&n).Error; err != nil || n != 1 {
			t.Fatalf("%d beats kept (%v), want 1", n, err)
		}
		if err := s.RecordSchedulerBeat(ctx, "", t0); err == nil {
			t.Fatal("an empty scheduler id was accepted")
		}
	})
}
