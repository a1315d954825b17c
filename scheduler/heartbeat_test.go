package scheduler

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestTickerHeartbeat: a Ticker beats once when it starts (with its tick at
// start, before the spec's first is due) and again at each tick, and stops
// beating when stopped; a paused Ticker does not beat.
func TestTickerHeartbeat(t *testing.T) {
	st := openStore(t, t.TempDir()+"/talaria.db")
	f := newFakeTemporal()
	var mu sync.Mutex
	var beats []time.Time
	paused := false
	beat := func(_ context.Context, at time.Time) error {
		mu.Lock()
		defer mu.Unlock()
		beats = append(beats, at)
		return nil
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(beats)
	}
	ticks := make(chan struct{}, 100)
	chores := 0 // housekeeping runs, each before its tick's onTick
	tk := NewTicker(st, f, f,
		WithTickSpec("0 0 0 1 1 *"), // once a year: only the start beats
		WithHeartbeat(beat))
	if err := tk.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return count() == 1 })
	if err := tk.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}

	tk = NewTicker(st, f, f,
		WithTickSpec("* * * * * *"), // every second
		WithHeartbeat(beat),
		WithPaused(func() bool { mu.Lock(); defer mu.Unlock(); return paused }),
		WithHousekeeping(func(context.Context, time.Time) error { mu.Lock(); defer mu.Unlock(); chores++; return nil }),
		WithOnTick(func(Result, error) { ticks <- struct{}{} }))
	if err := tk.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-ticks // the tick at start
	<-ticks
	<-ticks
	if n := count(); n < 4 { // the first ticker's 1 + the start + two ticks
		t.Fatalf("%d beats after a start and two ticks", n)
	}
	mu.Lock()
	if chores < 3 {
		t.Fatalf("housekeeping ran %d times in three ticks", chores)
	}
	mu.Unlock()
	mu.Lock()
	paused = true
	mu.Unlock()
	<-time.After(1500 * time.Millisecond) // a tick in flight may still end
	before := count()
	<-time.After(2500 * time.Millisecond) // room for a paused beat to show
	if after := count(); after != before {
		t.Fatalf("a paused ticker beat %d times", after-before)
	}
	if err := tk.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
