package models

import (
	"fmt"
	"testing"
	"time"
)

// TestPruneEndedEventsKeepsTheTableBounded: turns keep ending, each with
// its events; pruning after each day keeps only the last day's turns'
// events and those of the turn still running, however many days pass.
func TestPruneEndedEventsKeepsTheTableBounded(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openEventStore(t, dsn)
		ctx := t.Context()
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		running := Turn{ID: "turn/s/running", SessionID: "s", Status: "running", StartedAt: start}
		if err := s.db.Create(&running).Error; err != nil {
			t.Fatal(err)
		}
		const perDay, eventsPerTurn, days = 4, 5, 6
		var counts []int64
		for day := range days {
			now := start.Add(time.Duration(day) * 24 * time.Hour)
			for i := range perDay {
				ended := now.Add(time.Duration(i) * time.Hour)
				turn := Turn{ID: fmt.Sprintf("turn/s/%d-%d", day, i), SessionID: "s", Status: "completed", StartedAt: ended, EndedAt: &ended}
				if err := s.db.Create(&turn).Error; err != nil {
					t.Fatal(err)
				}
				var evs []Event
				for range eventsPerTurn {
					evs = append(evs, Event{TurnID: turn.ID, Kind: "delta", Data: "x", At: ended})
				}
				evs = append(evs, Event{TurnID: running.ID, Kind: "delta", Data: "still going", At: ended},
					Event{TurnID: "turn/gone/1", Kind: "delta", Data: "no turn row", At: ended})
				if err := s.AppendEvents(ctx, evs); err != nil {
					t.Fatal(err)
				}
			}
			// At the day's end, with a retention of a day.
			const retention = 24 * time.Hour
			if _, err := s.PruneEndedEvents(ctx, now.Add(24*time.Hour).Add(-retention)); err != nil {
				t.Fatalf("PruneEndedEvents: %v", err)
			}
			var n int64
			if err := s.db.Model(&Event{}).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			counts = append(counts, n)
		}
		// After the first day the table holds one day of ended turns, the
		// running turn's events (all of them) and a day of orphans.
		for day := 2; day < days; day++ {
			if grew := counts[day] - counts[day-1]; grew != perDay {
				t.Fatalf("events per day %v: the table grows by %d a day beyond the running turn's %d", counts, grew, perDay)
			}
		}
		kept, err := s.EventsAfter(ctx, running.ID, 0, 0)
		if err != nil || len(kept) != perDay*days {
			t.Fatalf("the running turn kept %d events (%v), want %d", len(kept), err, perDay*days)
		}
	})
}
