package activities

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/pgtest"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// TestAnswerCallsAnswersEveryCallOnce: after a batch that ended without
// storing its results, AnswerCalls keeps the results that were stored,
// answers a started (claimed) call as interrupted — outcome unknown for a
// tool with effects — and a call nothing started as not run, answers a
// planned call from its plan, and does nothing the second time. The store
// is a real SQLite file, and a real PostgreSQL schema under
// scripts/with-postgres.sh.
func TestAnswerCallsAnswersEveryCallOnce(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testAnswerCalls(t, filepath.Join(t.TempDir(), "talaria.db")) })
	t.Run("postgres", func(t *testing.T) { testAnswerCalls(t, pgtest.DSN(t, "answer_calls")) })
}

func testAnswerCalls(t *testing.T, dsn string) {
	ctx := context.Background()
	store, err := models.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.EnsureSession(ctx, "s", "m"); err != nil {
		t.Fatal(err)
	}
	call := func(id, name string) models.ToolCall {
		tc := models.ToolCall{ID: id, Type: "function"}
		tc.Function.Name, tc.Function.Arguments = name, `{}`
		return tc
	}
	saved, err := store.AppendMessages(ctx, []models.Message{{SessionID: "s", TurnID: "t", IdemKey: "t/call-1/assistant", Role: "assistant",
		ToolCalls: []models.ToolCall{call("ran", "read_file"), call("wrote", "write_file"), call("reading", "read_file"), call("waiting", "terminal"), call("skipped", "terminal")}}})
	if err != nil {
		t.Fatal(err)
	}
	batch := turnapi.ExecuteToolsInput{TurnID: "t", SessionID: "s", Call: 1, AssistantMessageID: saved[0].ID,
		Plan: []turnapi.CallPlan{{ID: "skipped", Action: turnapi.PlanSkip, Note: "Skipped: not approved."}}}
	// The batch stored one result and claimed two more calls before it stopped.
	if _, err := store.AppendMessages(ctx, []models.Message{{SessionID: "s", TurnID: "t", IdemKey: toolKey("t", 1, "ran"),
		Role: "tool", ToolCallID: "ran", Name: "read_file", Content: "the real content"}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"wrote", "reading"} {
		if _, err := store.ClaimTool(ctx, toolKey("t", 1, id)); err != nil {
			t.Fatal(err)
		}
	}
	a := &Activities{Store: store, Tools: tools.Default()}
	out, err := a.AnswerCalls(ctx, turnapi.AnswerCallsInput{Batch: batch, Interrupted: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.ResultMessageIDs) != 4 {
		t.Fatalf("answered %d calls, want 4", len(out.ResultMessageIDs))
	}
	msgs, err := store.Messages(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, m := range msgs {
		if m.Role == "tool" {
			got[m.ToolCallID] = append(got[m.ToolCallID], m.Content)
		}
	}
	want := map[string][]string{
		"ran":     {"the real content"},
		"wrote":   {"Error: interrupted: the turn was interrupted while this call ran", "Outcome unknown"},
		"reading": {"Error: interrupted: the turn was interrupted while this call ran", "no side effects"},
		"waiting": {"Error: cancelled: the turn was interrupted before this call started; it was not run."},
		"skipped": {"Skipped: not approved."},
	}
	for id, parts := range want {
		if len(got[id]) != 1 {
			t.Errorf("call %s has %d results: %q", id, len(got[id]), got[id])
			continue
		}
		for _, p := range parts {
			if !strings.Contains(got[id][0], p) {
				t.Errorf("call %s answered %q, want it to contain %q", id, got[id][0], p)
			}
		}
	}
	// Nothing may run the unstarted call now: it is claimed.
	if earlier, err := store.ClaimTool(ctx, toolKey("t", 1, "waiting")); err != nil || !earlier {
		t.Errorf("the unstarted call is not claimed: %v %v", earlier, err)
	}
	again, err := a.AnswerCalls(ctx, turnapi.AnswerCallsInput{Batch: batch, Interrupted: true})
	if err != nil || len(again.ResultMessageIDs) != 0 {
		t.Fatalf("second run answered %v (%v), want nothing", again.ResultMessageIDs, err)
	}
}

func TestUnansweredCall(t *testing.T) {
	for _, tt := range []struct {
		started, idempotent, interrupted bool
		reason, want                     string
	}{
		{false, false, true, "", "Error: cancelled: the turn was interrupted before this call started; it was not run."},
		{false, true, false, "disk full", "Error: cancelled: the tool batch failed (disk full) before this call started; it was not run."},
		{true, true, true, "", "Error: interrupted: the turn was interrupted while this call ran, and no result was recorded; it had no side effects, so it can be run again."},
		{true, false, false, "", "Error: interrupted: the tool batch failed while this call ran, and no result was recorded. " + OutcomeUnknown},
	} {
		if got := UnansweredCall(tt.started, tt.idempotent, tt.interrupted, tt.reason); got != tt.want {
			t.Errorf("UnansweredCall(%v, %v, %v, %q) = %q, want %q", tt.started, tt.idempotent, tt.interrupted, tt.reason, got, tt.want)
		}
	}
}

func TestExplainCancelled(t *testing.T) {
	ran := tools.Result{CallID: "c", Content: `{"error":"terminal: cancelled: context canceled; output so far: \"hi\""}`, IsError: true, Cancelled: true}
	notRun := tools.Result{CallID: "c", Content: `{"error":"cancelled"}`, IsError: true, Cancelled: true, NotStarted: true}
	for _, tt := range []struct {
		name  string
		r     tools.Result
		cause error
		want  string
	}{
		{"not cancelled", tools.Result{Content: "ok"}, context.Canceled, "ok"},
		{"batch not cancelled", ran, nil, ran.Content},
		{"interrupted while running", ran, context.Canceled, "Error: interrupted: the turn was interrupted while this call ran; it was stopped before it finished. It reported: " + ran.Content},
		{"not started", notRun, context.Canceled, "Error: cancelled: the turn was interrupted before this call started; it was not run."},
		{"out of time", notRun, context.DeadlineExceeded, "Error: cancelled: the tool batch ran out of time before this call started; it was not run."},
	} {
		if got := ExplainCancelled(tt.r, tt.cause).Content; got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
