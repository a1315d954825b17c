package models

import (
	"slices"
	"testing"
)

// TestRetireLineage: retiring a session marks its whole conversation (a
// compacted child retires its root's lineage), twice is once, and a
// session not stored yet retires its own id.
func TestRetireLineage(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		if _, err := s.EnsureSession(ctx, "root", "m"); err != nil {
			t.Fatal(err)
		}
		child, err := s.CompactSession(ctx, "root", "prompt", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.Retired(ctx, []string{"root", "other"}); err != nil || len(got) != 0 {
			t.Fatalf("retired before any: %v %v", got, err)
		}
		for range 2 {
			if err := s.RetireLineage(ctx, child.ID); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RetireLineage(ctx, "never-stored"); err != nil {
			t.Fatal(err)
		}
		got, err := s.Retired(ctx, []string{"root", "other", "never-stored", child.ID})
		slices.Sort(got)
		if err != nil || !slices.Equal(got, []string{"never-stored", "root"}) {
			t.Fatalf("retired = %v %v; want the root's lineage and the unstored id", got, err)
		}
	})
}
