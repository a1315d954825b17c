package scheduler

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/models"
)

// TestTickerSkipsTicksWhilePaused: a Ticker whose WithPaused function says
// true ticks nothing (no store read, no start); once it says false the next
// tick starts the slot that came due meanwhile.
func TestTickerSkipsTicksWhilePaused(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "talaria.db"))
	f := newFakeTemporal()
	createJob(t, st, models.CronJob{ID: "j", Schedule: "* * * * *", Enabled: true, CreatedAt: mustTime(t, day+"09:59:30Z")})
	var paused atomic.Bool
	paused.Store(true)
	var skipped atomic.Int32
	results := make(chan Result, 100)
	tk := NewTicker(st, f, f,
		WithClock(func() time.Time { return mustTime(t, day+"10:00:07Z") }),
		WithTickSpec("* * * * * *"),
		WithPaused(func() bool {
			if paused.Load() {
				skipped.Add(1)
				return true
			}
			return false
		}),
		WithOnTick(func(res Result, err error) {
			if err != nil {
				t.Errorf("tick: %v", err)
			}
			results <- res
		}))
	if err := tk.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = tk.Stop(ctx)
	}()
	deadline := time.Now().Add(time.Minute)
	for skipped.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the paused ticker was not asked twice within a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case res := <-results:
		t.Fatalf("a paused ticker ticked: %+v", res)
	default:
	}
	f.mu.Lock()
	calls := f.calls
	f.mu.Unlock()
	if calls != 0 {
		t.Fatalf("a paused ticker started %d workflows", calls)
	}
	paused.Store(false)
	select {
	case res := <-results:
		if got := refs(res.Started); !equal(got, []string{"j@10:00"}) {
			t.Errorf("first tick after the pause started %v, want the slot that came due", got)
		}
	case <-time.After(time.Minute):
		t.Fatal("no tick within a minute of resuming")
	}
}
