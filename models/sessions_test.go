package models

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestNextTurnConcurrent(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		const n = 20
		numbers := make([]int, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { numbers[i], errs[i] = s.NextTurn(t.Context(), "sess", "gpt-test", "") })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("NextTurn %d: %v", i, err)
			}
		}
		slices.Sort(numbers)
		for i, got := range numbers {
			if got != i+1 {
				t.Fatalf("turn numbers = %v, want 1..%d each once", numbers, n)
			}
		}
		sess, err := s.Session(t.Context(), "sess")
		if err != nil {
			t.Fatalf("Session: %v", err)
		}
		if sess.TurnCount != n || sess.Model != "gpt-test" {
			t.Errorf("session = %+v, want TurnCount %d and Model gpt-test", sess, n)
		}
	})
}

func TestSessionModel(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		tests := []struct {
			name      string
			calls     []string // models passed to NextTurn, in order
			wantModel string
		}{
			{name: "first model sticks", calls: []string{"a", "b"}, wantModel: "a"},
			{name: "empty model filled later", calls: []string{"", "b", "c"}, wantModel: "b"},
			{name: "empty later keeps model", calls: []string{"a", ""}, wantModel: "a"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				id := strings.ReplaceAll(tt.name, " ", "-")
				for i, model := range tt.calls {
					n, err := s.NextTurn(t.Context(), id, model, "")
					if err != nil {
						t.Fatalf("NextTurn: %v", err)
					}
					if n != i+1 {
						t.Errorf("NextTurn = %d, want %d", n, i+1)
					}
				}
				sess, err := s.Session(t.Context(), id)
				if err != nil {
					t.Fatalf("Session: %v", err)
				}
				if sess.Model != tt.wantModel {
					t.Errorf("Model = %q, want %q", sess.Model, tt.wantModel)
				}
			})
		}
	})
}

func TestEnsureSession(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		created, err := s.EnsureSession(t.Context(), "s1", "m1")
		if err != nil {
			t.Fatalf("EnsureSession: %v", err)
		}
		if created.ID != "s1" || created.Model != "m1" || created.TurnCount != 0 || created.CreatedAt.IsZero() {
			t.Errorf("created session = %+v", created)
		}

		if n, err := s.NextTurn(t.Context(), "s1", "other", ""); err != nil || n != 1 {
			t.Fatalf("NextTurn = %d, %v; want 1", n, err)
		}
		again, err := s.EnsureSession(t.Context(), "s1", "other")
		if err != nil {
			t.Fatalf("EnsureSession again: %v", err)
		}
		if again.TurnCount != 1 || again.Model != "m1" || !again.CreatedAt.Equal(created.CreatedAt) {
			t.Errorf("session after NextTurn = %+v, want TurnCount 1, Model m1, CreatedAt %v", again, created.CreatedAt)
		}

		if err := s.SetSessionTitle(t.Context(), "s1", "Greetings"); err != nil {
			t.Fatalf("SetSessionTitle: %v", err)
		}
		if _, err := s.EnsureSession(t.Context(), "s2", ""); err != nil {
			t.Fatalf("EnsureSession s2: %v", err)
		}
		list, err := s.Sessions(t.Context(), 0)
		if err != nil {
			t.Fatalf("Sessions: %v", err)
		}
		if len(list) != 2 {
			t.Fatalf("Sessions = %+v, want 2", list)
		}
		got, err := s.Session(t.Context(), "s1")
		if err != nil {
			t.Fatalf("Session: %v", err)
		}
		if got.Title != "Greetings" {
			t.Errorf("Title = %q, want Greetings", got.Title)
		}
		if limited, err := s.Sessions(t.Context(), 1); err != nil || len(limited) != 1 {
			t.Errorf("Sessions(limit 1) = %d sessions, %v", len(limited), err)
		}
	})
}

func TestSessionInvalidArguments(t *testing.T) {
	s := openStore(t, ":memory:")
	long := strings.Repeat("x", maxSessionIDLen+1)
	tests := []struct {
		name string
		call func() error
	}{
		{"NextTurn empty ID", func() error { _, err := s.NextTurn(t.Context(), "", "m", ""); return err }},
		{"NextTurn long ID", func() error { _, err := s.NextTurn(t.Context(), long, "m", ""); return err }},
		{"EnsureSession empty ID", func() error { _, err := s.EnsureSession(t.Context(), "", "m"); return err }},
		{"UpsertTurn empty ID", func() error { return s.UpsertTurn(t.Context(), Turn{SessionID: "s"}) }},
		{"UpsertTurn long session ID", func() error { return s.UpsertTurn(t.Context(), Turn{ID: "t", SessionID: long}) }},
		{"SaveTodosJSON empty ID", func() error { return s.SaveTodosJSON(t.Context(), "", []byte("[]")) }},
		{"SaveTodosJSON bad JSON", func() error { return s.SaveTodosJSON(t.Context(), "s", []byte("[{")) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("error = %v, want ErrInvalidArgument", err)
			}
		})
	}
}

func TestNotFound(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		tests := []struct {
			name string
			call func() error
		}{
			{"Session", func() error { _, err := s.Session(t.Context(), "nope"); return err }},
			{"Message", func() error { _, err := s.Message(t.Context(), 12345); return err }},
			{"Turn", func() error { _, err := s.Turn(t.Context(), "nope"); return err }},
			{"SetSessionTitle", func() error { return s.SetSessionTitle(t.Context(), "nope", "t") }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := tt.call(); !errors.Is(err, ErrNotFound) {
					t.Errorf("error = %v, want ErrNotFound", err)
				}
			})
		}
	})
}

func TestNextTurnKeyedReservationCountsOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		for _, c := range []struct {
			key  string
			want int
		}{
			{"req-a", 1}, {"req-a", 1}, // a re-run of the same reservation
			{"req-b", 2}, {"req-b", 2}, {"req-b", 2},
			{"", 3}, {"", 4}, // no key: every call counts
			{"req-a", 5}, // an old key is a new reservation once another came after it
		} {
			n, err := s.NextTurn(t.Context(), "keyed", "m", c.key)
			if err != nil || n != c.want {
				t.Fatalf("NextTurn(key %q) = %d, %v; want %d", c.key, n, err, c.want)
			}
		}
	})
}

// TestCountTurn: a turn numbered without a reservation counts; the next
// reservation comes after it, also for a retry of the one before.
func TestCountTurn(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		if _, err := s.EnsureSession(ctx, "goal", "m"); err != nil {
			t.Fatal(err)
		}
		if n, err := s.NextTurn(ctx, "goal", "m", "req-a"); err != nil || n != 1 {
			t.Fatalf("NextTurn = %d, %v", n, err)
		}
		for _, n := range []int{2, 3, 3, 1} { // retried, and an older turn's
			if err := s.CountTurn(ctx, "goal", n); err != nil {
				t.Fatal(err)
			}
		}
		if sess, err := s.Session(ctx, "goal"); err != nil || sess.TurnCount != 3 {
			t.Fatalf("session = %+v, %v; want 3 turns", sess, err)
		}
		if n, err := s.NextTurn(ctx, "goal", "m", "req-a"); err != nil || n != 4 {
			t.Fatalf("NextTurn after counted turns = %d, %v; want 4", n, err)
		}
	})
}

// SessionSystemPrompt and SessionKeys read what Session reads of those
// columns; a session stored before lineages has its own ID as lineage.
func TestSessionColumns(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		if _, err := s.EnsureOwnedSession(ctx, "s1", "telegram:dm:\x00 7"); err != nil {
			t.Fatal(err)
		}
		if p, err := s.SessionSystemPrompt(ctx, "s1"); err != nil || p != "" {
			t.Fatalf("prompt before one was set = %q, %v", p, err)
		}
		if _, err := s.SetSystemPromptOnce(ctx, "s1", "be brief \x00 ﷐"); err != nil {
			t.Fatal(err)
		}
		if p, err := s.SessionSystemPrompt(ctx, "s1"); err != nil || p != "be brief \x00 ﷐" {
			t.Fatalf("prompt = %q, %v", p, err)
		}
		if lineage, owner, err := s.SessionKeys(ctx, "s1"); err != nil || lineage != "s1" || owner != "telegram:dm:\x00 7" {
			t.Fatalf("keys = %q, %q, %v", lineage, owner, err)
		}
		if err := s.db.Exec("UPDATE sessions SET lineage_id = '' WHERE id = ?", "s1").Error; err != nil {
			t.Fatal(err)
		}
		if lineage, _, err := s.SessionKeys(ctx, "s1"); err != nil || lineage != "s1" {
			t.Fatalf("lineage of a session stored before lineages = %q, %v", lineage, err)
		}
		if _, err := s.SessionSystemPrompt(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("prompt of a missing session: %v", err)
		}
		if _, _, err := s.SessionKeys(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("keys of a missing session: %v", err)
		}
	})
}
