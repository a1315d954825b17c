package models

import (
	"testing"
	"time"
)

// TestInterruptOrphanTurn: only turns recorded as running are listed and
// repaired; a turn finished meanwhile keeps its outcome.
func TestInterruptOrphanTurn(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		for _, tr := range []Turn{
			{ID: "s/2", SessionID: "s", Number: 2, Status: TurnRunning, StartedAt: start.Add(time.Minute)},
			{ID: "s/1", SessionID: "s", Number: 1, Status: TurnRunning, StartedAt: start},
			{ID: "s/0", SessionID: "s", Number: 0, Status: "completed", StartedAt: start.Add(-time.Hour)},
		} {
			if err := s.UpsertTurn(ctx, tr); err != nil {
				t.Fatal(err)
			}
		}
		running, err := s.RunningTurns(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(running) != 2 || running[0].ID != "s/1" || running[1].ID != "s/2" {
			t.Fatalf("RunningTurns = %+v, want s/1 then s/2", running)
		}
		if one, _ := s.RunningTurns(ctx, 1); len(one) != 1 {
			t.Fatalf("RunningTurns(limit 1) = %d turns", len(one))
		}
		now := start.Add(time.Hour)
		tests := []struct {
			id      string
			changed bool
			status  string
		}{
			{"s/1", true, TurnInterrupted},
			{"s/1", false, TurnInterrupted}, // twice: nothing more
			{"s/0", false, "completed"},     // finished: kept
			{"nope", false, ""},
		}
		for _, tt := range tests {
			changed, err := s.InterruptOrphanTurn(ctx, tt.id, "its workflow is gone", now)
			if err != nil || changed != tt.changed {
				t.Fatalf("InterruptOrphanTurn(%s) = %v, %v; want %v", tt.id, changed, err, tt.changed)
			}
			if tt.status == "" {
				continue
			}
			got, err := s.Turn(ctx, tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.status {
				t.Fatalf("%s: status %q, want %q", tt.id, got.Status, tt.status)
			}
		}
		got, _ := s.Turn(ctx, "s/1")
		if got.ExitReason != TurnInterrupted || got.Error != "its workflow is gone" || got.EndedAt == nil || !got.EndedAt.Equal(now) {
			t.Fatalf("repaired turn = %+v", got)
		}
		if left, _ := s.RunningTurns(ctx, 0); len(left) != 1 || left[0].ID != "s/2" {
			t.Fatalf("still running: %+v", left)
		}
	})
}
