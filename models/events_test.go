package models

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// openEventStore opens dsn with the events table migrated.
func openEventStore(t *testing.T, dsn string) *Store {
	t.Helper()
	s := openStore(t, dsn)
	if err := s.MigrateEvents(t.Context()); err != nil {
		t.Fatalf("MigrateEvents: %v", err)
	}
	return s
}

func deltas(turnID string, texts ...string) []Event {
	evs := make([]Event, len(texts))
	for i, text := range texts {
		evs[i] = Event{TurnID: turnID, Kind: "delta", Data: text}
	}
	return evs
}

func eventData(evs []Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Data
	}
	return out
}

func TestMigrateEventsIsRepeatable(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openEventStore(t, dsn)
		if err := s.MigrateEvents(t.Context()); err != nil {
			t.Fatalf("second MigrateEvents: %v", err)
		}
		// A second Store on the same database migrates it again.
		other := openEventStore(t, dsn)
		if err := other.AppendEvents(t.Context(), deltas("t", "x")); err != nil {
			t.Fatalf("AppendEvents: %v", err)
		}
	})
}

func TestAppendEventsKeepsOrderAndFollowsByID(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openEventStore(t, dsn)
		ctx := t.Context()
		at := time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", 3600))

		first := deltas("turn/a/1", "Hel", "lo", ", ")
		first[0].ID = 42 // ignored
		first[1].At = at
		if err := s.AppendEvents(ctx, first); err != nil {
			t.Fatalf("AppendEvents: %v", err)
		}
		if first[0].ID != 42 || first[2].ID != 0 {
			t.Errorf("AppendEvents modified its argument: %+v", first)
		}
		// Another turn interleaves; it must not show up in turn/a/1.
		if err := s.AppendEvents(ctx, deltas("turn/b/1", "other")); err != nil {
			t.Fatalf("AppendEvents other turn: %v", err)
		}
		second := append(deltas("turn/a/1", "world"), Event{TurnID: "turn/a/1", Kind: "done", Data: `{"reason":"text_response"}`})
		if err := s.AppendEvents(ctx, second); err != nil {
			t.Fatalf("AppendEvents: %v", err)
		}

		all, err := s.EventsAfter(ctx, "turn/a/1", 0, 0)
		if err != nil {
			t.Fatalf("EventsAfter: %v", err)
		}
		want := []string{"Hel", "lo", ", ", "world", `{"reason":"text_response"}`}
		if got := eventData(all); !slices.Equal(got, want) {
			t.Fatalf("events = %q, want %q", got, want)
		}
		for i, ev := range all {
			if i > 0 && ev.ID <= all[i-1].ID {
				t.Errorf("IDs not increasing: %d after %d", ev.ID, all[i-1].ID)
			}
			if ev.TurnID != "turn/a/1" || ev.At.IsZero() || ev.At.Location() != time.UTC {
				t.Errorf("event %d = %+v, want turn/a/1 with a UTC time", i, ev)
			}
		}
		if !all[1].At.Equal(at.Truncate(time.Microsecond)) {
			t.Errorf("At = %v, want %v", all[1].At, at.Truncate(time.Microsecond))
		}
		if all[4].Kind != "done" {
			t.Errorf("last kind = %q, want done", all[4].Kind)
		}

		// Paging by the last seen ID.
		tests := []struct {
			name  string
			after int64
			limit int
			want  []string
		}{
			{"from start, limited", 0, 2, []string{"Hel", "lo"}},
			{"after second", all[1].ID, 2, []string{", ", "world"}},
			{"after fourth, default limit", all[3].ID, 0, []string{`{"reason":"text_response"}`}},
			{"after last", all[4].ID, 10, []string{}},
			{"negative after", -5, 1, []string{"Hel"}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				evs, err := s.EventsAfter(ctx, "turn/a/1", tc.after, tc.limit)
				if err != nil {
					t.Fatalf("EventsAfter: %v", err)
				}
				if evs == nil {
					t.Fatal("EventsAfter returned nil, want an empty slice")
				}
				if got := eventData(evs); !slices.Equal(got, tc.want) {
					t.Errorf("events = %q, want %q", got, tc.want)
				}
			})
		}

		none, err := s.EventsAfter(ctx, "turn/none", 0, 0)
		if err != nil || len(none) != 0 {
			t.Errorf("EventsAfter unknown turn = %v, %v; want none", none, err)
		}
	})
}

func TestEventsAfterDefaultLimit(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openEventStore(t, dsn)
		texts := make([]string, DefaultEventsLimit+eventInsertBatch+7) // spans insert chunks
		for i := range texts {
			texts[i] = fmt.Sprint(i)
		}
		if err := s.AppendEvents(t.Context(), deltas("t", texts...)); err != nil {
			t.Fatalf("AppendEvents: %v", err)
		}
		page, err := s.EventsAfter(t.Context(), "t", 0, -1)
		if err != nil {
			t.Fatalf("EventsAfter: %v", err)
		}
		if !slices.Equal(eventData(page), texts[:DefaultEventsLimit]) {
			t.Fatalf("first page has %d events, want the first %d in order", len(page), DefaultEventsLimit)
		}
		rest, err := s.EventsAfter(t.Context(), "t", page[len(page)-1].ID, len(texts))
		if err != nil {
			t.Fatalf("EventsAfter: %v", err)
		}
		if !slices.Equal(eventData(rest), texts[DefaultEventsLimit:]) {
			t.Fatalf("second page has %d events, want the remaining %d in order", len(rest), len(texts)-DefaultEventsLimit)
		}
	})
}

func TestAppendEventsRejectsInvalidEvents(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openEventStore(t, dsn)
		tests := []struct {
			name string
			ev   Event
		}{
			{"empty turn", Event{Kind: "delta", Data: "x"}},
			{"long turn", Event{TurnID: strings.Repeat("t", maxTurnIDLen+1), Kind: "delta"}},
			{"empty kind", Event{TurnID: "t", Data: "x"}},
			{"long kind", Event{TurnID: "t", Kind: strings.Repeat("k", MaxEventKindLen+1)}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				// The valid event before the invalid one is not stored either.
				batch := []Event{{TurnID: "t", Kind: "delta", Data: "ok"}, tc.ev}
				err := s.AppendEvents(t.Context(), batch)
				if !errors.Is(err, ErrInvalidArgument) {
					t.Fatalf("AppendEvents = %v, want ErrInvalidArgument", err)
				}
				if !strings.HasPrefix(err.Error(), "models: append event 1: ") {
					t.Errorf("error %q lacks context", err)
				}
				evs, err := s.EventsAfter(t.Context(), "t", 0, 0)
				if err != nil || len(evs) != 0 {
					t.Errorf("after rejected batch EventsAfter = %v, %v; want none", evs, err)
				}
			})
		}
		if err := s.AppendEvents(t.Context(), nil); err != nil {
			t.Errorf("AppendEvents(nil) = %v", err)
		}
		if _, err := s.EventsAfter(t.Context(), "", 0, 0); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("EventsAfter empty turn = %v, want ErrInvalidArgument", err)
		}
		// Multi-byte text and a kind of exactly the maximum length are fine.
		ok := Event{TurnID: "t", Kind: strings.Repeat("é", MaxEventKindLen), Data: "héllo → 世界 🚀"}
		if err := s.AppendEvents(t.Context(), []Event{ok}); err != nil {
			t.Fatalf("AppendEvents: %v", err)
		}
		evs, err := s.EventsAfter(t.Context(), "t", 0, 0)
		if err != nil || len(evs) != 1 || evs[0].Data != ok.Data || evs[0].Kind != ok.Kind {
			t.Errorf("EventsAfter = %+v, %v; want %+v", evs, err, ok)
		}
	})
}

// TestEventsAfterNeverSkipsUnderConcurrentWriters follows a turn by ID while
// several Stores (as separate processes would) append to it at once: the
// reader must see every event exactly once, each writer's in its order.
func TestEventsAfterNeverSkipsUnderConcurrentWriters(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		reader := openEventStore(t, dsn)
		const writers, batches, perBatch = 4, 40, 5
		total := writers * batches * perBatch

		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			s := openEventStore(t, dsn)
			wg.Go(func() {
				for b := range batches {
					evs := make([]Event, perBatch)
					for i := range evs {
						evs[i] = Event{TurnID: "shared", Kind: "delta", Data: fmt.Sprintf("%d:%04d", w, b*perBatch+i)}
					}
					if err := s.AppendEvents(t.Context(), evs); err != nil {
						errs <- fmt.Errorf("writer %d: %w", w, err)
						return
					}
				}
			})
		}

		var seen []Event
		var after int64
		deadline := time.Now().Add(time.Minute)
		for len(seen) < total && time.Now().Before(deadline) {
			evs, err := reader.EventsAfter(t.Context(), "shared", after, 37)
			if err != nil {
				t.Fatalf("EventsAfter: %v", err)
			}
			if len(evs) > 0 {
				after = evs[len(evs)-1].ID
				seen = append(seen, evs...)
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if len(seen) != total {
			t.Fatalf("reader saw %d events, want %d", len(seen), total)
		}
		next := make([]int, writers)
		for _, ev := range seen {
			var w, i int
			if _, err := fmt.Sscanf(ev.Data, "%d:%d", &w, &i); err != nil {
				t.Fatalf("event data %q: %v", ev.Data, err)
			}
			if i != next[w] {
				t.Fatalf("writer %d: saw event %d, want %d", w, i, next[w])
			}
			next[w]++
		}
	})
}

// TestAppendEventsWaitsForEarlierWriterOfTurn holds a writer of a turn
// between its insert and its commit: a later writer of the same turn must
// wait, or a reader could see the later event (higher ID) first and skip
// the earlier one when it follows the turn by ID.
func TestAppendEventsWaitsForEarlierWriterOfTurn(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		ctx := t.Context()
		slow, fast, reader := openEventStore(t, dsn), openEventStore(t, dsn), openEventStore(t, dsn)

		tx := slow.db.WithContext(ctx).Begin()
		if tx.Error != nil {
			t.Fatalf("begin: %v", tx.Error)
		}
		if err := slow.insertEvents(tx, deltas("turn", "first")); err != nil {
			tx.Rollback()
			t.Fatalf("insertEvents: %v", err)
		}
		done := make(chan error, 1)
		go func() { done <- fast.AppendEvents(ctx, deltas("turn", "second")) }()

		time.Sleep(300 * time.Millisecond)
		seen, err := reader.EventsAfter(ctx, "turn", 0, 0)
		if err != nil {
			tx.Rollback()
			t.Fatalf("EventsAfter: %v", err)
		}
		select {
		case err := <-done:
			tx.Rollback()
			t.Fatalf("AppendEvents returned %v while an earlier writer of the turn had not committed", err)
		default:
		}
		if len(seen) != 0 {
			t.Errorf("reader saw %q before the first writer committed", eventData(seen))
		}

		if err := tx.Commit().Error; err != nil {
			t.Fatalf("commit: %v", err)
		}
		if err := <-done; err != nil {
			t.Fatalf("AppendEvents: %v", err)
		}
		seen, err = reader.EventsAfter(ctx, "turn", 0, 0)
		if err != nil {
			t.Fatalf("EventsAfter: %v", err)
		}
		if got := eventData(seen); !slices.Equal(got, []string{"first", "second"}) {
			t.Errorf("events = %q, want [first second]", got)
		}
	})
}

// TestAppendEventUnlessRepeated: an event identical (kind and data) to the
// turn's last one is not stored again, also by concurrent writers; the same
// event after another one, or of another turn, is.
func TestAppendEventUnlessRepeated(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openEventStore(t, dsn)
		ctx := t.Context()
		approval := Event{TurnID: "turn/a/1", Kind: "approval", Data: `{"call_id":"c1"}`}
		decided := Event{TurnID: "turn/a/1", Kind: "approval_decided", Data: `{"call_id":"c1","choice":"once"}`}
		steps := []struct {
			ev   Event
			want bool
		}{
			{approval, true},
			{approval, false}, // a retry of the same write
			{Event{TurnID: "turn/a/1", Kind: "approval", Data: `{"call_id":"c2"}`}, true},
			{approval, true}, // not the last one any more
			{decided, true},
			{Event{TurnID: "turn/b/1", Kind: decided.Kind, Data: decided.Data}, true},
			{decided, false},
			{Event{TurnID: "turn/a/1", Kind: "status", Data: decided.Data}, true}, // another kind
		}
		for i, st := range steps {
			got, err := s.AppendEventUnlessRepeated(ctx, st.ev)
			if err != nil || got != st.want {
				t.Fatalf("step %d: AppendEventUnlessRepeated(%+v) = %v, %v; want %v", i, st.ev, got, err, st.want)
			}
		}
		evs, err := s.EventsAfter(ctx, "turn/a/1", 0, 0)
		if err != nil || len(evs) != 5 {
			t.Fatalf("EventsAfter = %d events, %v; want 5", len(evs), err)
		}

		// Writers racing with the same event store it once.
		race := Event{TurnID: "turn/c/1", Kind: "answered", Data: `{"call_id":"q","answered":true}`}
		var wg sync.WaitGroup
		var mu sync.Mutex
		stored := 0
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := s.AppendEventUnlessRepeated(ctx, race)
				if err != nil {
					t.Errorf("AppendEventUnlessRepeated: %v", err)
				}
				if ok {
					mu.Lock()
					stored++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		evs, err = s.EventsAfter(ctx, race.TurnID, 0, 0)
		if err != nil || len(evs) != 1 || stored != 1 {
			t.Fatalf("racing writers stored %d events (%d reported), %v; want 1", len(evs), stored, err)
		}

		if _, err := s.AppendEventUnlessRepeated(ctx, Event{TurnID: "t"}); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("AppendEventUnlessRepeated without a kind = %v, want ErrInvalidArgument", err)
		}
	})
}
