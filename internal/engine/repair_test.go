package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

func TestOrphanNote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		state  string
		orphan bool
		note   string
	}{
		{"running", false, ""},
		{"", true, "workflow is gone"},
		{"terminated", true, "ended (terminated)"},
		{"completed", true, "ended (completed)"},
	}
	for _, tt := range tests {
		note, orphan := orphanNote(tt.state)
		if orphan != tt.orphan || (tt.note == "" && note != "") || !strings.Contains(note, tt.note) {
			t.Errorf("orphanNote(%q) = %q, %v", tt.state, note, orphan)
		}
	}
	for s, want := range map[enumspb.WorkflowExecutionStatus]string{
		enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:    "running",
		enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:  "timed out",
		enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED: "terminated",
		enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:  "completed",
	} {
		if got := workflowStatus(s); got != want {
			t.Errorf("workflowStatus(%v) = %q, want %q", s, got, want)
		}
	}
}

// TestRepairOrphanTurns: on a real Temporal, a turn whose workflow still
// runs is left to resume; one whose workflow was terminated, and one that
// Temporal never heard of (its data was reset), are recorded interrupted.
func TestRepairOrphanTurns(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.Step{Hang: true})
	defer model.Close()
	rt := startRuntime(t, model)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	in := TurnTemplate(rt.Config, t.TempDir())
	in.SessionID, in.UserMessage = "orphans", "hello"
	go func() { _, _ = rt.RunMessage(ctx, in, workflows.BusyQueue, nil) }()
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	running, err := rt.Store.RunningTurns(ctx, 0)
	if err != nil || len(running) != 1 {
		t.Fatalf("running turns = %+v, %v", running, err)
	}
	live := running[0].ID
	gone := models.Turn{ID: "orphans/never-started", SessionID: "orphans", Number: 99, Status: models.TurnRunning, StartedAt: time.Now()}
	if err := rt.Store.UpsertTurn(ctx, gone); err != nil {
		t.Fatal(err)
	}

	if n, err := rt.RepairOrphanTurns(ctx); err != nil || n != 1 {
		t.Fatalf("first repair: %d, %v; want 1 (the turn Temporal never heard of)", n, err)
	}
	if tr, _ := rt.Store.Turn(ctx, live); tr.Status != models.TurnRunning {
		t.Fatalf("the live turn was repaired: %+v", tr)
	}
	if tr, _ := rt.Store.Turn(ctx, gone.ID); tr.Status != models.TurnInterrupted || !strings.Contains(tr.Error, "workflow is gone") {
		t.Fatalf("the orphan turn = %+v", tr)
	}

	if err := rt.Client.TerminateWorkflow(ctx, live, "", "test"); err != nil {
		t.Fatal(err)
	}
	if n, err := rt.RepairOrphanTurns(ctx); err != nil || n != 1 {
		t.Fatalf("second repair: %d, %v; want 1 (the terminated turn)", n, err)
	}
	if tr, _ := rt.Store.Turn(ctx, live); tr.Status != models.TurnInterrupted || !strings.Contains(tr.Error, "ended (terminated)") {
		t.Fatalf("the terminated turn = %+v", tr)
	}
}
