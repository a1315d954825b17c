package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/sessionview"
	"github.com/talaria-agent/talaria/models"
)

func TestTurnLine(t *testing.T) {
	for _, c := range []struct {
		status, reason, want string
	}{
		{"completed", "text_response", "turn 2: completed (text_response), 3 model calls, 120 tokens"},
		{"interrupted", "interrupted", "turn 2: interrupted, 3 model calls, 120 tokens"},
		{"failed", "", "turn 2: failed, 3 model calls, 120 tokens"},
		{"running", "", "turn 2: running, 3 model calls, 120 tokens"},
		{"completed", "max_iterations", "turn 2: completed (max_iterations), 3 model calls, 120 tokens"},
	} {
		got := turnLine(sessionview.Turn{Number: 2, Status: c.status, ExitReason: c.reason, APICalls: 3, TotalTokens: 120})
		if got != c.want {
			t.Errorf("turnLine(%s, %s) = %q, want %q", c.status, c.reason, got, c.want)
		}
	}
}

func TestResultWord(t *testing.T) {
	for outcome, want := range map[string]string{"done": "result", "failed": "failed", "stopped": "stopped", "not_run": "not run", "unknown": "outcome unknown"} {
		if got := resultWord(outcome); got != want {
			t.Errorf("resultWord(%q) = %q, want %q", outcome, got, want)
		}
	}
}

// TestSessionsShowCountsStoredTurns: a session whose row counts no turns
// (a goal's, written before its turns were counted) says as many turns as
// it lists, in show and in list.
func TestSessionsShowCountsStoredTurns(t *testing.T) {
	ctx := t.Context()
	dsn := filepath.Join(t.TempDir(), "talaria.db")
	st, err := models.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureSession(ctx, "goal-x", "m"); err != nil {
		t.Fatal(err)
	}
	for i, status := range []string{"completed", "interrupted"} {
		turn := models.Turn{ID: "turn/goal-x/" + string(rune('1'+i)), SessionID: "goal-x", Number: i + 1, Status: status, ExitReason: status, StartedAt: time.Now()}
		if err := st.UpsertTurn(ctx, turn); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	out := runSessions(t, dsn, "show", "goal-x")
	if !strings.Contains(out, "session goal-x — model m, 2 turns,") || !strings.Contains(out, "turn 2: interrupted, 0 model calls") ||
		strings.Contains(out, "interrupted (interrupted)") {
		t.Errorf("show:\n%s", out)
	}
	list := runSessions(t, dsn, "list")
	if f := strings.Fields(strings.Split(list, "\n")[1]); len(f) < 3 || f[0] != "goal-x" || f[2] != "2" {
		t.Errorf("list:\n%s", list)
	}
}

// TestSessionsShowOwner: a chat's session says whose it is, in show and
// in its JSON; the operator's says nothing of an owner.
func TestSessionsShowOwner(t *testing.T) {
	ctx := t.Context()
	dsn := filepath.Join(t.TempDir(), "talaria.db")
	st, err := models.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureOwnedSession(ctx, "chat-s", "telegram:dm:42"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureSession(ctx, "mine", "m"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if out := runSessions(t, dsn, "show", "chat-s"); !strings.Contains(out, "the chat telegram:dm:42's") {
		t.Fatalf("show of a chat's session:\n%s", out)
	}
	if out := runSessions(t, dsn, "show", "-o", "json", "chat-s"); !strings.Contains(out, `"owner": "telegram:dm:42"`) {
		t.Fatalf("show -o json of a chat's session:\n%s", out)
	}
	if out := runSessions(t, dsn, "show", "-o", "json", "mine"); strings.Contains(out, `"owner"`) {
		t.Fatalf("the operator's session names an owner:\n%s", out)
	}
}
