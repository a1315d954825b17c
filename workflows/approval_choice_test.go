package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/approval"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TestApprovalChoiceFromSignal: a decision signalled straight to the turn
// (not through talaria approve, which parses the choice) runs the command
// only for a known choice that allows it; any other value denies.
func TestApprovalChoiceFromSignal(t *testing.T) {
	cases := []struct {
		choice turnapi.ApprovalChoice
		want   turnapi.PlanAction
	}{
		{turnapi.ChoiceOnce, turnapi.PlanRun},
		{turnapi.ChoiceDeny, turnapi.PlanRefused},
		{"yolo", turnapi.PlanRefused},
		{"", turnapi.PlanRefused},
		{"ONCE", turnapi.PlanRefused}, // the workflow takes the parsed name only
	}
	for _, c := range cases {
		t.Run(string(c.choice), func(t *testing.T) {
			if got := approvedPlan(t, c.choice); got != c.want {
				t.Fatalf("choice %q: plan action %v, want %v", c.choice, got, c.want)
			}
		})
	}
}

// approvedPlan runs a turn whose one dangerous terminal call is answered by
// an approval signal carrying choice, and returns what the turn planned.
func approvedPlan(t *testing.T, choice turnapi.ApprovalChoice) turnapi.PlanAction {
	t.Helper()
	env := newTestEnv()
	Register(env)
	(&activities.Activities{}).Register(env)
	risky := turnapi.Assessment{Risk: turnapi.RiskDangerous, Rule: approval.RuleRecursiveDelete, Pattern: "rm -rf ./x"}
	env.OnActivity(turnapi.BeginTurnName, mock.Anything, mock.Anything).Return(turnapi.BeginTurnResult{UserMessageID: 1}, nil)
	env.OnActivity(turnapi.TurnPolicyName, mock.Anything, mock.Anything).Return(turnapi.TurnPolicyResult{}, nil)
	env.OnActivity(turnapi.CallModelName, mock.Anything, mock.Anything).Return(riskyThenText(risky))
	var plans []turnapi.CallPlan
	env.OnActivity(turnapi.ExecuteToolsName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in turnapi.ExecuteToolsInput) (turnapi.ExecuteToolsResult, error) {
			plans = append(plans, in.Plan...)
			return turnapi.ExecuteToolsResult{}, nil
		})
	env.OnActivity(turnapi.SaveGrantName, mock.Anything, mock.Anything).Return(nil)
	env.OnActivity(turnapi.RecordEventName, mock.Anything, mock.Anything).Return(nil)
	env.OnActivity(turnapi.FinishTurnName, mock.Anything, mock.Anything).Return(turnapi.FinishTurnResult{}, nil)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalApproval, ApprovalDecision{Choice: choice})
	}, time.Second)
	env.ExecuteWorkflow(TurnWorkflowName, TurnInput{SessionID: "s", TurnNumber: 1, MaxIterations: 10,
		Approvals: ApprovalSettings{Mode: ApprovalAsk, Timeout: time.Hour}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 {
		t.Fatalf("plans = %+v, want one", plans)
	}
	return plans[0].Action
}
