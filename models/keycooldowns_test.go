package models

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestKeyCooldowns: a key's cool-down is set, replaced (one row per pool
// and key), read per pool and in all, and survives reopening the store;
// pools do not see each other's keys.
func TestKeyCooldowns(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		ctx := t.Context()
		s := openStore(t, dsn)
		until := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.FixedZone("x", 3600))
		set := []KeyCooldown{
			{Pool: "p1", KeyID: "k1", Endpoint: "openai http://a/v1 m", Until: until, Class: "auth", Status: 401},
			{Pool: "p1", KeyID: "k2", Endpoint: "openai http://a/v1 m", Until: until, Class: "rate_limit", Status: 429},
			{Pool: "p2", KeyID: "k1", Endpoint: "anthropic http://b m\x00\u202e", Until: until.Add(time.Hour), Class: "rate_limit", Status: 429},
			// Replaces p1/k1's.
			{Pool: "p1", KeyID: "k1", Endpoint: "openai http://a/v1 m", Until: until.Add(5 * time.Second), Class: "rate_limit", Status: 429},
		}
		for _, c := range set {
			if err := s.SetKeyCooldown(ctx, c); err != nil {
				t.Fatalf("set %+v: %v", c, err)
			}
		}
		got, err := s.KeyCooldowns(ctx, "p1")
		if err != nil || len(got) != 2 {
			t.Fatalf("p1 = %+v, %v; want 2 rows", got, err)
		}
		if got[0].KeyID != "k1" || !got[0].Until.Equal(until.Add(5*time.Second).Truncate(time.Microsecond)) ||
			got[0].Class != "rate_limit" || got[0].Status != 429 || got[0].UpdatedAt.IsZero() {
			t.Errorf("p1 k1 = %+v; want the later rate limit", got[0])
		}
		if got[1].KeyID != "k2" || got[1].Class != "rate_limit" {
			t.Errorf("p1 k2 = %+v", got[1])
		}
		if none, err := s.KeyCooldowns(ctx, "p3"); err != nil || len(none) != 0 {
			t.Errorf("p3 = %+v, %v; want none", none, err)
		}
		all, err := s.AllKeyCooldowns(ctx)
		if err != nil || len(all) != 3 || all[2].Pool != "p2" || all[2].Endpoint != set[2].Endpoint {
			t.Fatalf("all = %+v, %v", all, err)
		}

		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		again := openStore(t, dsn)
		kept, err := again.KeyCooldowns(ctx, "p2")
		if err != nil || len(kept) != 1 || !kept[0].Until.Equal(until.Add(time.Hour).Truncate(time.Microsecond)) {
			t.Errorf("p2 after reopening = %+v, %v", kept, err)
		}
	})
}

// TestSetKeyCooldownInvalid: a pool or key id that is empty or too long is
// refused with ErrInvalidArgument.
func TestSetKeyCooldownInvalid(t *testing.T) {
	s := openStore(t, ":memory:")
	long := strings.Repeat("x", maxKeyCooldownID+1)
	for _, c := range []KeyCooldown{{KeyID: "k"}, {Pool: "p"}, {Pool: long, KeyID: "k"}, {Pool: "p", KeyID: long}} {
		if err := s.SetKeyCooldown(t.Context(), c); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("set %q/%q: %v, want ErrInvalidArgument", c.Pool, c.KeyID, err)
		}
	}
}
