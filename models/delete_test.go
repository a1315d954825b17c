package models

import (
	"errors"
	"testing"
)

func TestDeleteSession(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		for _, id := range []string{"gone", "kept"} {
			if _, err := s.NextTurn(ctx, id, "m", ""); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AppendMessages(ctx, []Message{userMessage(id, id+"/1", "hi")}); err != nil {
				t.Fatal(err)
			}
			if err := s.UpsertTurn(ctx, Turn{ID: "turn/" + id + "/1", SessionID: id, Number: 1, Status: "completed"}); err != nil {
				t.Fatal(err)
			}
			if err := s.AppendEvents(ctx, []Event{{TurnID: "turn/" + id + "/1", Kind: "done"}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.DeleteSession(ctx, "gone"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Session(ctx, "gone"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("session still there: %v", err)
		}
		if msgs, _ := s.AllMessages(ctx, "gone"); len(msgs) != 0 {
			t.Fatalf("%d messages left", len(msgs))
		}
		if evs, _ := s.EventsAfter(ctx, "turn/gone/1", 0, 0); len(evs) != 0 {
			t.Fatalf("%d events left", len(evs))
		}
		if msgs, _ := s.Messages(ctx, "kept"); len(msgs) != 1 {
			t.Fatal("the other session lost its messages")
		}
		if evs, _ := s.EventsAfter(ctx, "turn/kept/1", 0, 0); len(evs) != 1 {
			t.Fatal("the other session lost its events")
		}
		if err := s.DeleteSession(ctx, "gone"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("second delete = %v", err)
		}
	})
}
