package models

import (
	"fmt"
	"slices"
	"testing"
)

func TestClaimTool(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		earlier, err := s.ClaimTool(t.Context(), "turn/s/1/call-1/tool/a")
		if err != nil || earlier {
			t.Fatalf("first claim: earlier=%v err=%v", earlier, err)
		}
		earlier, err = s.ClaimTool(t.Context(), "turn/s/1/call-1/tool/a")
		if err != nil || !earlier {
			t.Fatalf("second claim: earlier=%v err=%v", earlier, err)
		}
		if _, err := s.ClaimTool(t.Context(), ""); err == nil {
			t.Fatal("empty key accepted")
		}
	})
}

// ClaimTools says of each key what ClaimTool would, and claims none when
// one key is invalid.
func TestClaimTools(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		if earlier, err := s.ClaimTools(ctx, nil); err != nil || len(earlier) != 0 {
			t.Fatalf("no keys: %v, %v", earlier, err)
		}
		if earlier, err := s.ClaimTools(ctx, []string{"k/b"}); err != nil || !slices.Equal(earlier, []bool{false}) {
			t.Fatalf("one key: %v, %v", earlier, err)
		}
		earlier, err := s.ClaimTools(ctx, []string{"k/a", "k/b", "k/c", "k/a"})
		if err != nil || !slices.Equal(earlier, []bool{false, true, false, true}) {
			t.Fatalf("batch: %v, %v", earlier, err)
		}
		if _, err := s.ClaimTools(ctx, []string{"k/d", ""}); err == nil {
			t.Fatal("empty key accepted")
		}
		if claimed, err := s.Claimed(ctx, "k/d"); err != nil || claimed {
			t.Fatalf("a batch with an invalid key claimed k/d: %v, %v", claimed, err)
		}
		for _, key := range []string{"k/a", "k/b", "k/c"} {
			if claimed, err := s.Claimed(ctx, key); err != nil || !claimed {
				t.Errorf("%s not claimed: %v", key, err)
			}
		}
	})
}

// BenchmarkClaims compares claiming a batch of four calls one by one and
// at once, on SQLite.
func BenchmarkClaims(b *testing.B) {
	s, err := Open(b.Context(), b.TempDir()+"/claims.db")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	batch := 0
	keys := func() []string {
		batch++
		return []string{fmt.Sprintf("t/%d/a", batch), fmt.Sprintf("t/%d/b", batch), fmt.Sprintf("t/%d/c", batch), fmt.Sprintf("t/%d/d", batch)}
	}
	b.Run("one-by-one", func(b *testing.B) {
		for range b.N {
			for _, key := range keys() {
				if _, err := s.ClaimTool(b.Context(), key); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("batch", func(b *testing.B) {
		for range b.N {
			if _, err := s.ClaimTools(b.Context(), keys()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
