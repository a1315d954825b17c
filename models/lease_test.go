package models

import (
	"testing"
	"time"
)

func TestLease(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		ttl := 20 * time.Second
		for _, st := range []struct {
			holder string
			at     time.Duration
			held   bool
			who    string
		}{
			{"a", 0, true, "a"},
			{"b", 5 * time.Second, false, "a"},  // a holds it
			{"a", 10 * time.Second, true, "a"},  // renewed to 30 s
			{"b", 25 * time.Second, false, "a"}, // still a's
			{"b", 31 * time.Second, true, "b"},  // expired: taken over
			{"a", 32 * time.Second, false, "b"},
		} {
			held, who, err := s.TakeLease(ctx, "gateway/telegram/1", st.holder, ttl, t0.Add(st.at))
			if err != nil || held != st.held || who != st.who {
				t.Fatalf("%s at +%s: held %v by %q (%v), want %v by %q", st.holder, st.at, held, who, err, st.held, st.who)
			}
		}
		if err := s.ReleaseLease(ctx, "gateway/telegram/1", "a"); err != nil {
			t.Fatal(err)
		}
		if who, _, _ := s.Lease(ctx, "gateway/telegram/1"); who != "b" {
			t.Fatalf("a released b's lease: holder %q", who)
		}
		if _, _, err := s.TakeLease(ctx, "other/x", "c", ttl, t0); err != nil {
			t.Fatal(err)
		}
		if err := s.NoteLease(ctx, "gateway/telegram/1", "b", "", t0, "getUpdates: connection refused"); err != nil {
			t.Fatal(err)
		}
		if err := s.NoteLease(ctx, "gateway/telegram/1", "a", "99", t0, ""); err != nil { // not a's: no change
			t.Fatal(err)
		}
		if ls, err := s.Leases(ctx, "gateway/"); err != nil || len(ls) != 1 || ls[0].Holder != "b" || ls[0].LastError == "" || ls[0].LastUpdateAt != nil {
			t.Fatalf("Leases(gateway/) = %+v %v", ls, err)
		}
		if err := s.NoteLease(ctx, "gateway/telegram/1", "b", "1003", t0.Add(time.Second), ""); err != nil {
			t.Fatal(err)
		}
		if ls, _ := s.Leases(ctx, "gateway/"); ls[0].LastUpdateID != "1003" || ls[0].LastError != "" || ls[0].LastUpdateAt == nil || !ls[0].LastUpdateAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("after an update: %+v", ls[0])
		}
		if err := s.ReleaseLease(ctx, "gateway/telegram/1", "b"); err != nil {
			t.Fatal(err)
		}
		if held, _, err := s.TakeLease(ctx, "gateway/telegram/1", "a", ttl, t0.Add(33*time.Second)); !held || err != nil {
			t.Fatalf("a released lease is not taken: %v %v", held, err)
		}
	})
}
