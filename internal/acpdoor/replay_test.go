package acpdoor

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/models"
)

// openStore is a store in a SQLite file of the test's own.
func openStore(t *testing.T) *models.Store {
	t.Helper()
	st, err := models.Open(t.Context(), filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestReplayCompactedSession: a load of a compacted session shows its
// whole conversation as it happened (the root's messages, then what came
// after the compaction), not the copies compaction made, nor only the
// root's part; the todo list is the newest session's.
func TestReplayCompactedSession(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := openStore(t)
	if _, err := st.EnsureSession(ctx, "s", "m"); err != nil {
		t.Fatal(err)
	}
	msg := func(session, turn, key, role, content string) models.Message {
		return models.Message{SessionID: session, TurnID: turn, IdemKey: key, Role: role, Content: content}
	}
	if _, err := st.AppendMessages(ctx, []models.Message{
		msg("s", "t1", "k1", "user", "first question"),
		msg("s", "t1", "k2", "assistant", "first answer"),
		msg("s", "t2", "k3", "user", "second question"),
		msg("s", "t2", "k4", "assistant", "second answer"),
	}); err != nil {
		t.Fatal(err)
	}
	child, err := st.CompactSession(ctx, "s", "system", []models.Message{
		msg("", "t2", "", "user", "[summary of the first exchange]"),
		msg("", "t2", "", "user", "second question"),
		msg("", "t2", "", "assistant", "second answer"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AppendMessages(ctx, []models.Message{
		msg(child.ID, "t3", "k5", "user", "third question"),
		msg(child.ID, "t3", "k6", "assistant", "third answer"),
		msg(child.ID, "t4", "k7", "user", "fourth question, running"),
		msg(child.ID, "t4", "k8", "assistant", "fourth, streaming"),
	}); err != nil {
		t.Fatal(err)
	}
	todos, _ := json.Marshal([]tools.TodoItem{{ID: "1", Content: "step one", Status: "completed"}})
	if err := st.SaveTodosJSON(ctx, child.ID, todos); err != nil {
		t.Fatal(err)
	}

	for _, id := range []string{"s", child.ID} { // by the root's id or the child's
		updates, err := replay(ctx, st, id, "t4")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, u := range updates {
			got = append(got, wire(t, u))
		}
		want := []string{"first question", "user_message_chunk", "first answer", "second question", "second answer",
			"compacted", "agent_thought_chunk", "third question", "third answer", "fourth question, running"}
		joined := strings.Join(got, "\n")
		at := 0
		for _, w := range want {
			i := strings.Index(joined[at:], w)
			if i < 0 {
				t.Fatalf("load of %s: %q missing or out of order in:\n%s", id, w, joined)
			}
			at += i + len(w)
		}
		for _, never := range []string{"summary of the first", "fourth, streaming"} {
			if strings.Contains(joined, never) {
				t.Fatalf("load of %s shows %q:\n%s", id, never, joined)
			}
		}
		if n := strings.Count(joined, "second answer"); n != 1 {
			t.Fatalf("load of %s shows the second answer %d times:\n%s", id, n, joined)
		}
		u, ok, err := plan(ctx, st, id)
		if err != nil || !ok || !strings.Contains(wire(t, u), `"content":"step one"`) {
			t.Fatalf("plan of %s = %s, %v, %v", id, wire(t, u), ok, err)
		}
	}
	if _, ok, err := plan(ctx, st, "s-none"); ok || err == nil {
		t.Fatalf("plan of a missing session: %v, %v", ok, err)
	}
}

func TestPlanUpdate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		items []tools.TodoItem
		want  string
	}{
		{"empty list clears the plan", nil, `{"entries":[],"sessionUpdate":"plan"}`},
		{"statuses", []tools.TodoItem{{ID: "a", Content: "read", Status: "completed"}, {ID: "b", Content: "write", Status: "in_progress"}, {ID: "c", Content: "test", Status: "pending"}},
			`{"entries":[{"content":"read","priority":"medium","status":"completed"},{"content":"write","priority":"medium","status":"in_progress"},{"content":"test","priority":"medium","status":"pending"}],"sessionUpdate":"plan"}`},
		{"cancelled and unknown items are left out", []tools.TodoItem{{ID: "a", Content: "x", Status: "cancelled"}, {ID: "b", Content: "y", Status: "weird"}},
			`{"entries":[],"sessionUpdate":"plan"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wire(t, planUpdate(tt.items)); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestPlanChanged(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ev   models.Event
		want bool
	}{
		{models.Event{Kind: events.KindToolEnd, Data: `{"id":"1","name":"todo"}`}, true},
		{models.Event{Kind: events.KindToolEnd, Data: `{"id":"1","name":"todo","failed":true}`}, false},
		{models.Event{Kind: events.KindToolStart, Data: `{"id":"1","name":"todo"}`}, false},
		{models.Event{Kind: events.KindToolEnd, Data: `{"id":"1","name":"terminal"}`}, false},
		{models.Event{Kind: events.KindToolEnd, Data: `not json`}, false},
	}
	for _, tt := range tests {
		if got := planChanged(tt.ev); got != tt.want {
			t.Errorf("planChanged(%v) = %v, want %v", tt.ev, got, tt.want)
		}
	}
}

func TestWithoutCopies(t *testing.T) {
	t.Parallel()
	msgs := []models.Message{{IdemKey: "s~1/copy/0"}, {IdemKey: "t3/user"}, {IdemKey: "s~1/copy/x"}, {IdemKey: "s~10/copy/0"}, {IdemKey: ""}}
	got := withoutCopies(msgs, "s~1")
	if len(got) != 3 || got[0].IdemKey != "t3/user" || got[1].IdemKey != "s~10/copy/0" || got[2].IdemKey != "" {
		t.Fatalf("withoutCopies = %v", got)
	}
}

// TestReplayAfterDeletions: a deleted middle session's messages are still
// shown (from the copies its child keeps), and a new session that reuses a
// deleted root's id shows its own messages only, not the old
// conversation's.
func TestReplayAfterDeletions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := openStore(t)
	msg := func(session, key, role, content string) models.Message {
		return models.Message{SessionID: session, TurnID: "t-" + key, IdemKey: key, Role: role, Content: content}
	}
	appendAll := func(ms ...models.Message) {
		t.Helper()
		if _, err := st.AppendMessages(ctx, ms); err != nil {
			t.Fatal(err)
		}
	}
	shown := func(id string) string {
		t.Helper()
		updates, err := replay(ctx, st, id, "")
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, u := range updates {
			b.WriteString(wire(t, u) + "\n")
		}
		return b.String()
	}
	if _, err := st.EnsureSession(ctx, "r", "m"); err != nil {
		t.Fatal(err)
	}
	appendAll(msg("r", "a1", "user", "q1"), msg("r", "a2", "assistant", "a1"))
	c1, err := st.CompactSession(ctx, "r", "sys", []models.Message{msg("", "", "user", "[summary 1]")})
	if err != nil {
		t.Fatal(err)
	}
	appendAll(msg(c1.ID, "b1", "user", "q2"), msg(c1.ID, "b2", "assistant", "a2"))
	c2, err := st.CompactSession(ctx, c1.ID, "sys", []models.Message{msg("", "", "user", "[summary 2]"),
		msg("", "", "user", "q2"), msg("", "", "assistant", "a2")})
	if err != nil {
		t.Fatal(err)
	}
	appendAll(msg(c2.ID, "c1", "user", "q3"))
	if err := st.DeleteSession(ctx, c1.ID); err != nil {
		t.Fatal(err)
	}
	got := shown(c2.ID)
	for _, w := range []string{"q1", "a1", "q2", "a2", "q3"} {
		if !strings.Contains(got, `"text":"`+w+`"`) {
			t.Fatalf("after the middle session's deletion, %s is not shown:\n%s", w, got)
		}
	}

	// The root goes (its child stays, of the old lineage); a new
	// conversation takes its id.
	if err := st.DeleteSession(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureSession(ctx, "r", "m"); err != nil {
		t.Fatal(err)
	}
	appendAll(msg("r", "n1", "user", "new question"))
	if got := shown("r"); !strings.Contains(got, "new question") || strings.Contains(got, `"q`) || strings.Contains(got, "compacted") {
		t.Fatalf("the new conversation shows:\n%s", got)
	}
}
