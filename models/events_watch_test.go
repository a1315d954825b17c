package models

import (
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/pgtest"
)

// wakeWithin bounds how long a test waits for a wake that must come; it is
// a deadline for a hang, not a measure.
const wakeWithin = 30 * time.Second

// waitWake waits for a value on wake, failing t after wakeWithin.
func waitWake(t *testing.T, wake <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-wake:
	case <-time.After(wakeWithin):
		t.Fatalf("no wake %s", what)
	}
}

// drain empties wake (a wake is coalesced into at most one value).
func drain(wake <-chan struct{}) {
	select {
	case <-wake:
	default:
	}
}

// TestWatchEventsWakesForEveryWriter: a watch of a turn wakes when events
// of the turn are stored by the same Store, by another Store on the same
// database (another process), and by AppendEventUnlessRepeated; on
// PostgreSQL and on SQLite.
func TestWatchEventsWakesForEveryWriter(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, dsn string) {
		reader := openEventStore(t, dsn)
		other := openEventStore(t, dsn)
		wake, stop := reader.WatchEvents("turn/w/1")
		defer stop()
		for _, c := range []struct {
			name   string
			writer *Store
		}{{"this store", reader}, {"another store", other}} {
			drain(wake)
			if err := c.writer.AppendEvents(t.Context(), deltas("turn/w/1", c.name)); err != nil {
				t.Fatal(err)
			}
			waitWake(t, wake, "after an append by "+c.name)
			drain(wake)
			if _, err := c.writer.AppendEventUnlessRepeated(t.Context(), Event{TurnID: "turn/w/1", Kind: "status", Data: c.name}); err != nil {
				t.Fatal(err)
			}
			waitWake(t, wake, "after a single event by "+c.name)
		}
		evs, err := reader.EventsAfter(t.Context(), "turn/w/1", 0, 0)
		if err != nil || len(evs) != 4 {
			t.Fatalf("events %v (%v), want 4", evs, err)
		}
	})
}

// TestWatchEventsStopped: a stopped watch is forgotten, so a turn nobody
// watches any more costs nothing; other watches of the turn go on.
func TestWatchEventsStopped(t *testing.T) {
	t.Parallel()
	s := openEventStore(t, ":memory:")
	_, stop := s.WatchEvents("turn/s/1")
	wake, stop2 := s.WatchEvents("turn/s/1")
	defer stop2()
	stop()
	if err := s.AppendEvents(t.Context(), deltas("turn/s/1", "x")); err != nil {
		t.Fatal(err)
	}
	waitWake(t, wake, "of the watch still open")
	stop2()
	s.events.mu.Lock()
	defer s.events.mu.Unlock()
	if len(s.events.subs) != 0 || len(s.events.seen) != 0 {
		t.Fatalf("watches left after both stopped: %v %v", s.events.subs, s.events.seen)
	}
}

// TestWatchEventsSurvivesALostListener: on PostgreSQL, a watch keeps
// waking while its Store's notification connection is lost, and after it
// is back, for events another process stores.
func TestWatchEventsSurvivesALostListener(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t, "watch")
	proxied, proxy := pgtest.Proxied(t, dsn)
	reader := openEventStore(t, proxied)
	writer := openEventStore(t, dsn)
	wake, stop := reader.WatchEvents("turn/l/1")
	defer stop()

	if err := writer.AppendEvents(t.Context(), deltas("turn/l/1", "before")); err != nil {
		t.Fatal(err)
	}
	waitWake(t, wake, "while listening")
	proxy.Down()
	drain(wake)
	if err := writer.AppendEvents(t.Context(), deltas("turn/l/1", "while down")); err != nil {
		t.Fatal(err)
	}
	waitWake(t, wake, "while the listener is lost")
	proxy.Up()
	drain(wake)
	if err := writer.AppendEvents(t.Context(), deltas("turn/l/1", "after")); err != nil {
		t.Fatal(err)
	}
	waitWake(t, wake, "once the listener is back")
}

// TestMaxIDs is the highest ID per turn.
func TestMaxIDs(t *testing.T) {
	t.Parallel()
	got := maxIDs([]Event{{TurnID: "a", ID: 3}, {TurnID: "b", ID: 1}, {TurnID: "a", ID: 7}, {TurnID: "a", ID: 5}})
	if len(got) != 2 || got["a"] != 7 || got["b"] != 1 {
		t.Fatalf("maxIDs = %v", got)
	}
}

// TestWatchAfterClose: a watch of a closed Store starts nothing (the
// package's goroutine check would see it) and its stop is harmless.
func TestWatchAfterClose(t *testing.T) {
	t.Parallel()
	s, err := Open(t.Context(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, stop := s.WatchEvents("turn/c/1")
	stop()
}
