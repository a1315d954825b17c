package models

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestChildSessionID(t *testing.T) {
	long := strings.Repeat("r", maxSessionIDLen)
	tests := []struct {
		name, root string
		gen        int
		want       string // "" when only the length and the suffix are checked
	}{
		{"short", "abc", 1, "abc~1"},
		{"second generation", "abc", 2, "abc~2"},
		{"fits exactly", strings.Repeat("x", maxSessionIDLen-3), 12, strings.Repeat("x", maxSessionIDLen-3) + "~12"},
		{"one too long", strings.Repeat("x", maxSessionIDLen-2), 12, ""},
		{"longest root", long, 1, ""},
		{"longest root, big generation", long, 1 << 40, ""},
		{"multibyte root", strings.Repeat("é", maxSessionIDLen), 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ChildSessionID(tt.root, tt.gen)
			if tt.want != "" && got != tt.want {
				t.Fatalf("ChildSessionID = %q, want %q", got, tt.want)
			}
			if n := utf8.RuneCountInString(got); n > maxSessionIDLen {
				t.Fatalf("ChildSessionID has %d characters: %q", n, got)
			}
			if !utf8.ValidString(got) || !strings.HasSuffix(got, fmt.Sprintf("~%d", tt.gen)) {
				t.Fatalf("ChildSessionID = %q", got)
			}
			if again := ChildSessionID(tt.root, tt.gen); again != got {
				t.Fatalf("not deterministic: %q then %q", got, again)
			}
		})
	}

	// Long roots sharing their first 120 characters still get distinct IDs,
	// and so do their generations.
	seen := map[string]string{}
	for _, root := range []string{long, long[:maxSessionIDLen-1] + "s", long[:120] + "abc", long[:120] + "abd", long[:maxSessionIDLen-2]} {
		for gen := 1; gen <= 11; gen++ {
			id := ChildSessionID(root, gen)
			key := fmt.Sprintf("%s/%d", root, gen)
			if other, dup := seen[id]; dup {
				t.Fatalf("%s and %s both give %q", other, key, id)
			}
			seen[id] = key
		}
	}
}

// lineageParent creates session id with a title, a system prompt and six
// messages (one hidden, one with a tool call) and returns its visible ones.
func lineageParent(t *testing.T, s *Store, id string) []Message {
	t.Helper()
	ctx := t.Context()
	if _, err := s.NextTurn(ctx, id, "model-a", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSessionTitle(ctx, id, "a title"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetSystemPromptOnce(ctx, id, "the old prompt"); err != nil {
		t.Fatal(err)
	}
	turn := id + "/turn-1"
	msgs := []Message{
		{Role: "user", Content: "we picked the orange kite codename"},
		{Role: "assistant", Content: "noted", Reasoning: "short answer"},
		{Role: "assistant", Content: "discarded reply", Hidden: true},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Type: "function", Function: FunctionCall{Name: "terminal", Arguments: `{"command":"ls"}`}}}},
		{Role: "tool", ToolCallID: "c1", Name: "terminal", Content: "the silver comet file"},
		{Role: "assistant", Content: "done", FinishReason: "stop", PromptTokens: 10, CompletionTokens: 2},
	}
	for i := range msgs {
		msgs[i].SessionID, msgs[i].TurnID, msgs[i].IdemKey = id, turn, fmt.Sprintf("%s/%d", turn, i)
	}
	if _, err := s.AppendMessages(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	visible, err := s.Messages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return visible
}

// compaction is what compression would store for a parent: its first and
// last visible messages around a summary.
func compaction(parent []Message, summary string) []Message {
	return []Message{parent[0], {Role: "user", Content: summary, TurnID: "summary"}, parent[len(parent)-1]}
}

// sameConversation compares messages ignoring where and when they are stored.
func sameConversation(t *testing.T, got, want []Message) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		g.ID, g.SessionID, g.IdemKey, g.CreatedAt = 0, "", "", w.CreatedAt
		w.ID, w.SessionID, w.IdemKey = 0, "", ""
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("message %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestCompactSession(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		parentMsgs := lineageParent(t, s, "root")
		before, err := s.Session(ctx, "root")
		if err != nil {
			t.Fatal(err)
		}
		if before.LineageID != "root" || before.ParentSessionID != "" || before.Generation != 0 {
			t.Fatalf("new root = %+v", before)
		}
		allBefore, err := s.AllMessages(ctx, "root")
		if err != nil {
			t.Fatal(err)
		}

		copies := compaction(parentMsgs, "summary of the middle")
		child, err := s.CompactSession(ctx, "root", "the new prompt", copies)
		if err != nil {
			t.Fatal(err)
		}
		want := Session{ID: "root~1", Model: "model-a", Title: "a title", ParentSessionID: "root", LineageID: "root",
			Generation: 1, TurnCount: 1, SystemPrompt: "the new prompt"}
		want.CreatedAt, want.UpdatedAt = child.CreatedAt, child.UpdatedAt
		if !reflect.DeepEqual(*child, want) || child.CreatedAt.IsZero() {
			t.Fatalf("child = %+v\nwant %+v", *child, want)
		}
		if stored, err := s.Session(ctx, child.ID); err != nil || !reflect.DeepEqual(*stored, *child) {
			t.Fatalf("stored child = %+v, %v", stored, err)
		}
		childMsgs, err := s.AllMessages(ctx, child.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameConversation(t, childMsgs, copies)
		for i, m := range childMsgs {
			if m.SessionID != child.ID || m.IdemKey != fmt.Sprintf("root~1/copy/%d", i) {
				t.Fatalf("copy %d stored as session %q key %q", i, m.SessionID, m.IdemKey)
			}
			if i > 0 && m.ID <= childMsgs[i-1].ID || m.ID <= allBefore[len(allBefore)-1].ID {
				t.Fatalf("copy %d has ID %d", i, m.ID)
			}
		}

		// The parent is untouched.
		after, err := s.Session(ctx, "root")
		if err != nil || !reflect.DeepEqual(*after, *before) {
			t.Fatalf("parent after = %+v, %v\nbefore %+v", after, err, before)
		}
		if allAfter, err := s.AllMessages(ctx, "root"); err != nil || !reflect.DeepEqual(allAfter, allBefore) {
			t.Fatalf("parent messages changed: %v", err)
		}

		// Compacting again returns the same child and writes nothing.
		again, err := s.CompactSession(ctx, "root", "another prompt", []Message{{Role: "user", Content: "other"}})
		if err != nil || !reflect.DeepEqual(*again, *child) {
			t.Fatalf("second compaction = %+v, %v\nwant %+v", again, err, child)
		}
		if msgs, _ := s.AllMessages(ctx, child.ID); len(msgs) != len(copies) {
			t.Fatalf("second compaction wrote messages: %d", len(msgs))
		}

		// A missing parent.
		if _, err := s.CompactSession(ctx, "nope", "p", copies); !errors.Is(err, ErrNotFound) {
			t.Fatalf("missing parent: %v", err)
		}
		if _, err := s.Session(ctx, "nope~1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a child of a missing parent was created: %v", err)
		}

		// A root of the longest ID: its descendants' IDs are shortened.
		long := strings.Repeat("L", maxSessionIDLen)
		lineageParent(t, s, long)
		id := long
		for gen := 1; gen <= 2; gen++ {
			c, err := s.CompactSession(ctx, id, "p", nil)
			if err != nil {
				t.Fatalf("compact generation %d of a long root: %v", gen, err)
			}
			if c.ID != ChildSessionID(long, gen) || len(c.ID) > maxSessionIDLen || c.LineageID != long || c.ParentSessionID != id {
				t.Fatalf("generation %d of a long root = %+v", gen, c)
			}
			id = c.ID
		}
		if tip, err := s.Tip(ctx, long); err != nil || tip != id {
			t.Fatalf("Tip of a long root = %q, %v", tip, err)
		}

		// A child ID taken by an unrelated session.
		lineageParent(t, s, "busy")
		if _, err := s.NextTurn(ctx, "busy~1", "m", ""); err != nil {
			t.Fatal(err)
		}
		busy, err := s.CompactSession(ctx, "busy", "p", nil)
		if err != nil || busy.ID != "busy~2" || busy.ParentSessionID != "busy" || busy.Generation != 1 {
			t.Fatalf("taken child ID: %+v, %v; want busy~2, a child of busy", busy, err)
		}
		if tip, err := s.Tip(ctx, "busy"); err != nil || tip != "busy~2" {
			t.Fatalf("Tip of busy = %q, %v", tip, err)
		}
		// Every candidate taken.
		lineageParent(t, s, "full")
		for n := 1; n <= maxChildIDTries; n++ {
			if _, err := s.NextTurn(ctx, ChildSessionID("full", n), "m", ""); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.CompactSession(ctx, "full", "p", nil); !errors.Is(err, ErrSessionExists) {
			t.Fatalf("every child ID taken: %v", err)
		}
	})
}

func TestCompactSessionConcurrently(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		copies := compaction(lineageParent(t, s, "root"), "summary")
		const callers = 8
		children := make([]*Session, callers)
		errs := make([]error, callers)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				children[i], errs[i] = s.CompactSession(ctx, "root", fmt.Sprintf("prompt %d", i), copies)
			})
		}
		wg.Wait()
		for i := range callers {
			if errs[i] != nil {
				t.Fatalf("caller %d: %v", i, errs[i])
			}
			if !reflect.DeepEqual(*children[i], *children[0]) {
				t.Fatalf("caller %d got %+v, caller 0 %+v", i, children[i], children[0])
			}
		}
		if msgs, _ := s.AllMessages(ctx, children[0].ID); len(msgs) != len(copies) {
			t.Fatalf("the child has %d messages, want %d", len(msgs), len(copies))
		}
	})
}

func TestTipAndLineage(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		copies := compaction(lineageParent(t, s, "root"), "summary")
		child, err := s.CompactSession(ctx, "root", "p1", copies)
		if err != nil {
			t.Fatal(err)
		}
		grandchild, err := s.CompactSession(ctx, child.ID, "p2", copies[1:])
		if err != nil {
			t.Fatal(err)
		}
		if grandchild.ID != "root~2" || grandchild.ParentSessionID != child.ID || grandchild.LineageID != "root" || grandchild.Generation != 2 {
			t.Fatalf("grandchild = %+v", grandchild)
		}
		lineageParent(t, s, "other")

		for _, tt := range []struct{ from, want string }{
			{"root", "root~2"}, {"root~1", "root~2"}, {"root~2", "root~2"}, {"other", "other"},
		} {
			if got, err := s.Tip(ctx, tt.from); err != nil || got != tt.want {
				t.Errorf("Tip(%q) = %q, %v; want %q", tt.from, got, err, tt.want)
			}
		}
		if _, err := s.Tip(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Tip of a missing session: %v", err)
		}

		for _, id := range []string{"root", "root~1", "root~2"} {
			if got := lineageIDs(t, s, id); !reflect.DeepEqual(got, []string{"root", "root~1", "root~2"}) {
				t.Errorf("Lineage(%q) = %v", id, got)
			}
		}
		if got := lineageIDs(t, s, "other"); !reflect.DeepEqual(got, []string{"other"}) {
			t.Errorf("Lineage(other) = %v", got)
		}
		if _, err := s.Lineage(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Lineage of a missing session: %v", err)
		}
	})
}

func lineageIDs(t *testing.T, s *Store, id string) []string {
	t.Helper()
	sessions, err := s.Lineage(t.Context(), id)
	if err != nil {
		t.Fatalf("Lineage(%q): %v", id, err)
	}
	var ids []string
	for i, sess := range sessions {
		if sess.Generation < i {
			t.Fatalf("Lineage(%q): %s of generation %d at %d", id, sess.ID, sess.Generation, i)
		}
		ids = append(ids, sess.ID)
	}
	return ids
}

func TestTipStopsOnCycle(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		for _, id := range []string{"a", "b"} {
			if _, err := s.NextTurn(ctx, id, "m", ""); err != nil {
				t.Fatal(err)
			}
		}
		// Corrupt data: a and b are each other's parent.
		for _, link := range [][2]string{{"a", "b"}, {"b", "a"}} {
			if err := s.db.Exec("UPDATE sessions SET parent_session_id = ? WHERE id = ?", link[1], link[0]).Error; err != nil {
				t.Fatal(err)
			}
		}
		if tip, err := s.Tip(ctx, "a"); err == nil || errors.Is(err, ErrNotFound) {
			t.Fatalf("Tip on a cycle = %q, %v", tip, err)
		}
	})
}

func TestDeleteSessionInLineage(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		s := openStore(t, dsn)
		ctx := t.Context()
		copies := compaction(lineageParent(t, s, "root"), "summary")
		child, err := s.CompactSession(ctx, "root", "p1", copies)
		if err != nil {
			t.Fatal(err)
		}
		grandchild, err := s.CompactSession(ctx, child.ID, "p2", copies)
		if err != nil {
			t.Fatal(err)
		}

		// Deleting the middle reparents the grandchild to the root.
		if err := s.DeleteSession(ctx, child.ID); err != nil {
			t.Fatal(err)
		}
		got, err := s.Session(ctx, grandchild.ID)
		if err != nil || got.ParentSessionID != "root" || got.LineageID != "root" || got.Generation != 2 || !got.UpdatedAt.Equal(grandchild.UpdatedAt) {
			t.Fatalf("grandchild after deleting its parent = %+v, %v", got, err)
		}
		if tip, err := s.Tip(ctx, "root"); err != nil || tip != grandchild.ID {
			t.Fatalf("Tip(root) = %q, %v", tip, err)
		}
		if ids := lineageIDs(t, s, grandchild.ID); !reflect.DeepEqual(ids, []string{"root", grandchild.ID}) {
			t.Fatalf("Lineage = %v", ids)
		}
		// The root is still compacted: into the grandchild now.
		if again, err := s.CompactSession(ctx, "root", "p", copies); err != nil || again.ID != grandchild.ID {
			t.Fatalf("compacting the root again = %+v, %v", again, err)
		}

		// Deleting the root leaves the grandchild without a parent, in
		// the same lineage, with its messages.
		if err := s.DeleteSession(ctx, "root"); err != nil {
			t.Fatal(err)
		}
		got, err = s.Session(ctx, grandchild.ID)
		if err != nil || got.ParentSessionID != "" || got.LineageID != "root" {
			t.Fatalf("grandchild after deleting the root = %+v, %v", got, err)
		}
		if ids := lineageIDs(t, s, grandchild.ID); !reflect.DeepEqual(ids, []string{grandchild.ID}) {
			t.Fatalf("Lineage = %v", ids)
		}
		if tip, err := s.Tip(ctx, grandchild.ID); err != nil || tip != grandchild.ID {
			t.Fatalf("Tip(grandchild) = %q, %v", tip, err)
		}
		if msgs, _ := s.AllMessages(ctx, grandchild.ID); len(msgs) != len(copies) {
			t.Fatalf("grandchild has %d messages", len(msgs))
		}
		if msgs, _ := s.AllMessages(ctx, "root"); len(msgs) != 0 {
			t.Fatalf("root kept %d messages", len(msgs))
		}
	})
}

// TestLineageOfOldSessions: a database whose sessions table predates
// lineages gets the new columns when opened, and its sessions are roots.
func TestLineageOfOldSessions(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		// Create the current schema, then take it back to the old shape.
		s, err := Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			"DROP INDEX idx_sessions_parent_session_id",
			"DROP INDEX idx_sessions_lineage_id",
			"ALTER TABLE sessions DROP COLUMN parent_session_id",
			"ALTER TABLE sessions DROP COLUMN lineage_id",
			"ALTER TABLE sessions DROP COLUMN generation",
			"INSERT INTO sessions (id, model, title, turn_count, system_prompt, created_at, updated_at) VALUES ('old', 'm', 't', 3, 'p', ?, ?)",
		} {
			var args []any
			if strings.HasPrefix(q, "INSERT") {
				args = []any{now(), now()}
			}
			if err := s.db.Exec(q, args...).Error; err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if s.db.Migrator().HasColumn(&Session{}, "lineage_id") {
			t.Fatal("lineage_id still there")
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}

		s = openStore(t, dsn)
		ctx := t.Context()
		for _, col := range []string{"parent_session_id", "lineage_id", "generation"} {
			if !s.db.Migrator().HasColumn(&Session{}, col) {
				t.Fatalf("column %s not added", col)
			}
		}
		for _, idx := range []string{"idx_sessions_parent_session_id", "idx_sessions_lineage_id"} {
			if !s.db.Migrator().HasIndex(&Session{}, idx) {
				t.Fatalf("index %s not added", idx)
			}
		}
		old, err := s.Session(ctx, "old")
		if err != nil || old.LineageID != "old" || old.ParentSessionID != "" || old.Generation != 0 || old.TurnCount != 3 {
			t.Fatalf("old session = %+v, %v", old, err)
		}
		if listed, err := s.Sessions(ctx, 0); err != nil || len(listed) != 1 || listed[0].LineageID != "old" {
			t.Fatalf("Sessions = %+v, %v", listed, err)
		}
		if _, err := s.AppendMessages(ctx, []Message{userMessage("old", "old/1", "an old orange kite")}); err != nil {
			t.Fatal(err)
		}
		child, err := s.CompactSession(ctx, "old", "new", nil)
		if err != nil || child.ID != "old~1" || child.LineageID != "old" || child.Generation != 1 {
			t.Fatalf("child of an old session = %+v, %v", child, err)
		}
		if tip, err := s.Tip(ctx, "old"); err != nil || tip != "old~1" {
			t.Fatalf("Tip = %q, %v", tip, err)
		}
		if ids := lineageIDs(t, s, "old~1"); !reflect.DeepEqual(ids, []string{"old", "old~1"}) {
			t.Fatalf("Lineage = %v", ids)
		}
		groups, err := s.SearchMessages(ctx, Scope{}, "orange kite", 10, 0)
		if err != nil || len(groups) != 1 || groups[0].LineageID != "old" || groups[0].SessionID != "old" {
			t.Fatalf("search = %+v, %v", groups, err)
		}
	})
}
