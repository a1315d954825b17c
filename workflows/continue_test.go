package workflows

import (
	"errors"
	"testing"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
)

func TestShouldContinueAsNew(t *testing.T) {
	tests := []struct {
		every, iterations int
		suggested, want   bool
	}{
		{0, DefaultContinueEvery - 1, false, false},
		{0, DefaultContinueEvery, false, true},
		{10, 9, false, false},
		{10, 10, false, true},
		{10, 1, true, true},
		{-1, 1_000_000, true, false},
	}
	for _, tt := range tests {
		if got := shouldContinueAsNew(tt.every, tt.iterations, tt.suggested); got != tt.want {
			t.Errorf("shouldContinueAsNew(%d, %d, %v) = %v", tt.every, tt.iterations, tt.suggested, got)
		}
	}
}

// TestTurnContinuesAsNewWithItsState: after ContinueEvery iterations the
// turn continues as new, carrying counters, budget and undelivered steers;
// the next run resumes without beginning the turn again.
func TestTurnContinuesAsNewWithItsState(t *testing.T) {
	env, inputs, _ := controlEnv(t, 0, toolReply("terminal"), toolReply("terminal"), toolReply("terminal"), textReply())
	env.ExecuteWorkflow(TurnWorkflowName, TurnInput{SessionID: "s", TurnNumber: 1, ContinueEvery: 2, MaxIterations: 10})
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("workflow error = %v, want continue-as-new", err)
	}
	if len(*inputs) != 2 {
		t.Fatalf("model calls before continuing = %d", len(*inputs))
	}
	var next TurnInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	if next.Resume == nil || next.Resume.State.Calls != 2 || next.Resume.State.Budget.Used != 2 || next.Resume.Runs != 0 {
		t.Fatalf("carried = %+v", next.Resume)
	}

	// The next run picks up where the first stopped.
	env2, inputs2, finished := controlEnv(t, 0, toolReply("terminal"), textReply())
	env2.ExecuteWorkflow(TurnWorkflowName, next)
	var r ConversationResult
	if err := env2.GetWorkflowResult(&r); err != nil {
		t.Fatal(err)
	}
	if !r.Completed || r.APICalls != 4 || (*inputs2)[0].Call != 3 {
		t.Fatalf("result = %+v, first call of run 2 = %d", r, (*inputs2)[0].Call)
	}
	if finished.StartedAt != next.Resume.StartedAt {
		t.Fatal("the turn's start time was not carried")
	}
}
