package models

import (
	"errors"
	"testing"
)

// TestLaterAttemptSupersedes: once an attempt of a model call has begun,
// the store refuses the events of earlier attempts and earlier calls of
// the turn, and takes those of the attempt itself, of later ones, of other
// turns and of no model call.
func TestLaterAttemptSupersedes(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, dsn string) {
		s := openEventStore(t, dsn)
		ctx := t.Context()
		ev := func(turn, kind string, call, attempt int) []Event {
			return []Event{{TurnID: turn, Kind: kind, Data: "x", ModelCall: call, Attempt: attempt}}
		}
		for _, c := range []struct {
			evs        []Event
			superseded bool
		}{
			{ev("t", KindAttempt, 2, 1), false},
			{ev("t", "delta", 2, 1), false},
			{ev("t", KindAttempt, 2, 2), false}, // the retry begins
			{ev("t", "delta", 2, 1), true},      // the first attempt, still running
			{ev("t", "wait", 2, 1), true},
			{ev("t", "delta", 1, 3), true}, // an earlier call's
			{ev("t", "delta", 2, 2), false},
			{ev("t", "tool_start", 0, 0), false}, // no model call's
			{ev("other", "delta", 2, 1), false},
			{ev("t", KindAttempt, 3, 1), false}, // the next call
			{ev("t", "delta", 2, 2), true},
			{ev("t", "delta", 3, 1), false},
		} {
			err := s.AppendEvents(ctx, c.evs)
			if got := errors.Is(err, ErrSuperseded); got != c.superseded || (err != nil && !got) {
				t.Fatalf("append %+v: %v; want superseded %v", c.evs[0], err, c.superseded)
			}
		}
		evs, err := s.EventsAfter(ctx, "t", 0, 0)
		if err != nil || len(evs) != 7 {
			t.Fatalf("stored %d events of t (%v), want 7", len(evs), err)
		}
	})
}
