package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/approval"
)

func TestNarrowMode(t *testing.T) {
	cases := []struct {
		requested, policy, want ApprovalMode
	}{
		{ApprovalOff, ApprovalDeny, ApprovalDeny},
		{ApprovalOff, ApprovalAsk, ApprovalAsk},
		{ApprovalAsk, ApprovalDeny, ApprovalDeny},
		{ApprovalDeny, ApprovalOff, ApprovalDeny}, // a sender may narrow
		{ApprovalAsk, ApprovalOff, ApprovalAsk},
		{ApprovalOff, ApprovalOff, ApprovalOff},
		{ApprovalOff, "", ApprovalOff}, // no policy recorded: old histories replay unchanged
		{ApprovalAsk, "bogus", ApprovalAsk},
		{"bogus", ApprovalOff, ApprovalAsk}, // an unknown request counts as ask
		{"bogus", ApprovalDeny, ApprovalDeny},
	}
	for _, c := range cases {
		if got := narrowMode(c.requested, c.policy); got != c.want {
			t.Errorf("narrowMode(%q, %q) = %q, want %q", c.requested, c.policy, got, c.want)
		}
	}
}

func TestApprovalGate(t *testing.T) {
	dangerous := approval.Assessment{Risk: approval.Dangerous, Rule: approval.RuleRecursiveDelete, Reason: "recursive delete"}
	blocked := approval.Assessment{Risk: approval.Blocked, Rule: approval.RuleRootDelete}
	ruleGrant := approval.Grants{Session: []string{approval.RuleRecursiveDelete}}
	cases := []struct {
		name   string
		mode   ApprovalMode
		grants approval.Grants
		risk   approval.Assessment
		want   gateDecision
	}{
		{"safe runs", ApprovalDeny, approval.Grants{}, approval.Assessment{}, gateRun},
		{"blocked refused even when off", ApprovalOff, approval.Grants{}, blocked, gateRefuse},
		{"blocked refused even when granted", ApprovalAsk, approval.Grants{Always: []string{approval.RuleRootDelete}}, blocked, gateRefuse},
		{"dangerous asks", ApprovalAsk, approval.Grants{}, dangerous, gateAsk},
		{"dangerous refused under deny", ApprovalDeny, approval.Grants{}, dangerous, gateRefuse},
		{"dangerous runs when off", ApprovalOff, approval.Grants{}, dangerous, gateRun},
		{"old rule grant covers an old assessment", ApprovalAsk, ruleGrant, dangerous, gateRun},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := approvalGate(c.mode, c.grants, activities.ToolCallRef{Name: "terminal", Risk: c.risk})
			if got != c.want {
				t.Fatalf("approvalGate = %v, want %v", got, c.want)
			}
		})
	}
}

// TestContinuedRunReloadsPolicy: a continued run does not trust the mode
// and grants its input carries: the serving worker's policy (deny) and the
// stored grants (none) decide, so a carried grant and "off" run nothing.
func TestContinuedRunReloadsPolicy(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	Register(env)
	(&activities.Activities{}).Register(env)
	risky := approval.Assessment{Risk: approval.Dangerous, Rule: approval.RuleRecursiveDelete, Pattern: "rm -rf ./x"}
	calls := 0
	env.OnActivity(activities.TurnPolicyName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.TurnPolicyInput) (activities.TurnPolicyResult, error) {
			if in.SessionID != "s" {
				t.Errorf("policy asked for session %q", in.SessionID)
			}
			return activities.TurnPolicyResult{ApprovalPolicy: "deny"}, nil
		})
	env.OnActivity(activities.CallModelName, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.CallModelInput) (activities.CallModelResult, error) {
			calls++
			if calls > 1 {
				return textReply(), nil
			}
			r := toolReply("terminal")
			r.ToolCalls[0].Risk = risky
			return r, nil
		})
	var plans [][]activities.CallPlan
	env.OnActivity(activities.ExecuteToolsName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ExecuteToolsInput) (activities.ExecuteToolsResult, error) {
			plans = append(plans, in.Plan)
			return activities.ExecuteToolsResult{}, nil
		})
	env.OnActivity(activities.FinishTurnName, mock.Anything, mock.Anything).Return(activities.FinishTurnResult{}, nil)
	crafted := TurnInput{SessionID: "s", TurnNumber: 1, MaxIterations: 10,
		Approvals: ApprovalSettings{Mode: ApprovalOff},
		Resume:    &TurnCarry{State: NewTurnState(10), Grants: approval.Grants{Session: []string{risky.GrantKey()}}}}
	env.ExecuteWorkflow(TurnWorkflowName, crafted)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 || len(plans[0]) != 1 || plans[0][0].Action != activities.PlanRefused {
		t.Fatalf("plans = %+v, want the dangerous call refused", plans)
	}
}
