package models

import (
	"testing"
	"time"
)

func TestPairing(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		if err := s.AddPairingCode(ctx, "telegram", "ABCD-EFGH", t0.Add(10*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := s.AddPairingCode(ctx, "telegram", "OLD0-CODE", t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		for _, st := range []struct {
			platform, code, user string
			at                   time.Duration
			ok                   bool
		}{
			{"telegram", "WRONG-CODE", "7", 0, false},
			{"slack", "ABCD-EFGH", "7", 0, false},                  // another platform's
			{"telegram", "OLD0-CODE", "7", 2 * time.Minute, false}, // expired
			{"telegram", "ABCD-EFGH", "7", time.Minute, true},
			{"telegram", "ABCD-EFGH", "8", time.Minute, false}, // spent
		} {
			ok, err := s.Pair(ctx, st.platform, st.code, st.user, t0.Add(st.at))
			if err != nil || ok != st.ok {
				t.Fatalf("Pair(%s, %s, %s) = %v %v, want %v", st.platform, st.code, st.user, ok, err, st.ok)
			}
		}
		for user, want := range map[string]bool{"7": true, "8": false} {
			if got, err := s.Paired(ctx, "telegram", user); err != nil || got != want {
				t.Errorf("Paired(%s) = %v %v, want %v", user, got, err, want)
			}
		}
		if got, _ := s.Paired(ctx, "slack", "7"); got {
			t.Error("a user paired on telegram is paired on slack")
		}
	})
}
