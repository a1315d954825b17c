package models

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestForkSession(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		visible := lineageParent(t, s, "src")
		fork, err := s.ForkSession(ctx, "src", "copy")
		if err != nil {
			t.Fatal(err)
		}
		if fork.ID != "copy" || fork.LineageID != "copy" || fork.ParentSessionID != "" || fork.Generation != 0 ||
			fork.TurnCount != 0 || fork.Model != "model-a" || fork.Title != "a title" || fork.SystemPrompt != "the old prompt" {
			t.Fatalf("fork = %+v", fork)
		}
		stored, err := s.Session(ctx, "copy")
		if err != nil || stored.SystemPrompt != "the old prompt" || stored.LineageID != "copy" {
			t.Fatalf("stored fork = %+v, %v", stored, err)
		}
		got, err := s.AllMessages(ctx, "copy")
		if err != nil {
			t.Fatal(err)
		}
		sameConversation(t, got, visible) // hidden messages are not copied
		for i, m := range got {
			if m.SessionID != "copy" || m.ID == visible[i].ID || !strings.HasPrefix(m.IdemKey, "copy/fork/") || m.Hidden {
				t.Errorf("copy %d = %+v", i, m)
			}
		}
		// The source is untouched, and compaction's links do not reach the fork.
		if src, err := s.Messages(ctx, "src"); err != nil || len(src) != len(visible) {
			t.Fatalf("source messages = %d, %v", len(src), err)
		}
		if tip, err := s.Tip(ctx, "src"); err != nil || tip != "src" {
			t.Fatalf("Tip(src) = %q, %v", tip, err)
		}
		// The fork takes turns of its own, from 1.
		if n, err := s.NextTurn(ctx, "copy", "", ""); err != nil || n != 1 {
			t.Fatalf("first turn of the fork = %d, %v", n, err)
		}

		for _, tt := range []struct {
			name, src, id string
			want          error
		}{
			{"missing source", "nosuch", "other", ErrNotFound},
			{"taken id", "src", "copy", ErrSessionExists},
			{"the source's own id", "src", "src", ErrSessionExists},
			{"empty id", "src", "", ErrInvalidArgument},
			{"long id", "src", strings.Repeat("x", 129), ErrInvalidArgument},
		} {
			if _, err := s.ForkSession(ctx, tt.src, tt.id); !errors.Is(err, tt.want) {
				t.Errorf("%s: ForkSession(%q, %q) = %v, want %v", tt.name, tt.src, tt.id, err, tt.want)
			}
		}
		if _, err := s.Session(ctx, "other"); !errors.Is(err, ErrNotFound) {
			t.Errorf("a failed fork left session other: %v", err)
		}
	})
}

func TestSessionPage(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		for _, id := range []string{"a", "review.a.1", "b", "c", "d"} {
			if _, err := s.NextTurn(ctx, id, "m", ""); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Millisecond) // distinct updated_at: newest first is d, c, b, review.a.1, a
		}
		ids := func(ss []Session) string {
			var out []string
			for _, x := range ss {
				out = append(out, x.ID)
			}
			return strings.Join(out, ",")
		}
		for _, tt := range []struct {
			offset, limit int
			background    bool
			want          string
		}{
			{0, 0, false, "d,c,b,a"},
			{0, 0, true, "d,c,b,review.a.1,a"},
			{0, 2, false, "d,c"},
			{2, 2, false, "b,a"},
			{3, 2, false, "a"},
			{4, 2, false, ""},
			{1, 0, false, "c,b,a"},
			{3, 1, true, "review.a.1"},
		} {
			got, err := s.SessionPage(ctx, tt.offset, tt.limit, tt.background)
			if err != nil {
				t.Fatal(err)
			}
			if ids(got) != tt.want {
				t.Errorf("SessionPage(%d, %d, %v) = %s, want %s", tt.offset, tt.limit, tt.background, ids(got), tt.want)
			}
		}
	})
}
