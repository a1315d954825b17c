package engine

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/models"
)

// TestPruneEventsChore: the scheduler's housekeeping deletes the live events of
// turns that ended more than events.retention ago, keeps a running turn's
// and recent ones, runs at most once per its period, and does nothing with
// a retention of 0.
func TestPruneEventsChore(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	home := t.TempDir()
	st, err := models.Open(ctx, filepath.Join(home, "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	old, recent := now.Add(-48*time.Hour), now.Add(-time.Hour)
	for _, turn := range []models.Turn{
		{ID: "turn/s/1", SessionID: "s", Status: "completed", StartedAt: old, EndedAt: &old},
		{ID: "turn/s/2", SessionID: "s", Status: "completed", StartedAt: recent, EndedAt: &recent},
		{ID: "turn/s/3", SessionID: "s", Status: "running", StartedAt: old},
	} {
		if err := st.UpsertTurn(ctx, turn); err != nil {
			t.Fatal(err)
		}
		if err := st.AppendEvents(ctx, []models.Event{{TurnID: turn.ID, Kind: "delta", Data: "x", At: turn.StartedAt}}); err != nil {
			t.Fatal(err)
		}
	}
	left := func() []string {
		var ids []string
		for _, id := range []string{"turn/s/1", "turn/s/2", "turn/s/3"} {
			if evs, err := st.EventsAfter(ctx, id, 0, 0); err != nil {
				t.Fatal(err)
			} else if len(evs) > 0 {
				ids = append(ids, id)
			}
		}
		return ids
	}
	cfg := config.Default(home)
	cfg.Events.Retention = 0
	rt := &Runtime{Store: st, Config: cfg, logger: slog.New(slog.DiscardHandler)}
	if err := rt.housekeeping(time.Minute)(ctx, now); err != nil || len(left()) != 3 {
		t.Fatalf("retention 0 pruned: %v %v", left(), err)
	}
	rt.Config.Events.Retention = 24 * time.Hour
	chore := rt.housekeeping(10 * time.Minute)
	if err := chore(ctx, now); err != nil {
		t.Fatal(err)
	}
	if got := left(); len(got) != 2 || got[0] != "turn/s/2" || got[1] != "turn/s/3" {
		t.Fatalf("after pruning: events left of %v, want turn/s/2 and turn/s/3", got)
	}
	// Within its period the chore does not run again.
	later := now.Add(5 * time.Minute)
	end := now.Add(-25 * time.Hour) // turn 2 ended "long ago" now
	if err := st.UpsertTurn(ctx, models.Turn{ID: "turn/s/2", SessionID: "s", Status: "completed", StartedAt: end, EndedAt: &end}); err != nil {
		t.Fatal(err)
	}
	if err := chore(ctx, later); err != nil || len(left()) != 2 {
		t.Fatalf("the chore ran again within its period: %v %v", left(), err)
	}
	if err := chore(ctx, now.Add(11*time.Minute)); err != nil || len(left()) != 1 {
		t.Fatalf("after its period: events left of %v (%v), want only the running turn's", left(), err)
	}
}
