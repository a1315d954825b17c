package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/approval"
	"github.com/talaria-agent/talaria/internal/turnapi"
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
	dangerous := turnapi.Assessment{Risk: turnapi.RiskDangerous, Rule: approval.RuleRecursiveDelete, Reason: "recursive delete"}
	blocked := turnapi.Assessment{Risk: turnapi.RiskBlocked, Rule: approval.RuleRootDelete}
	ruleGrant := turnapi.Grants{Session: []string{approval.RuleRecursiveDelete}}
	cases := []struct {
		name   string
		mode   ApprovalMode
		grants turnapi.Grants
		risk   turnapi.Assessment
		want   gateDecision
	}{
		{"safe runs", ApprovalDeny, turnapi.Grants{}, turnapi.Assessment{}, gateRun},
		{"blocked refused even when off", ApprovalOff, turnapi.Grants{}, blocked, gateRefuse},
		{"blocked refused even when granted", ApprovalAsk, turnapi.Grants{Always: []string{approval.RuleRootDelete}}, blocked, gateRefuse},
		{"dangerous asks", ApprovalAsk, turnapi.Grants{}, dangerous, gateAsk},
		{"dangerous refused under deny", ApprovalDeny, turnapi.Grants{}, dangerous, gateRefuse},
		{"dangerous runs when off", ApprovalOff, turnapi.Grants{}, dangerous, gateRun},
		{"old rule grant covers an old assessment", ApprovalAsk, ruleGrant, dangerous, gateRun},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := approvalGate(c.mode, c.grants, turnapi.ToolCallRef{Name: "terminal", Risk: c.risk})
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
	env := newTestEnv()
	Register(env)
	(&activities.Activities{}).Register(env)
	risky := turnapi.Assessment{Risk: turnapi.RiskDangerous, Rule: approval.RuleRecursiveDelete, Pattern: "rm -rf ./x"}
	env.OnActivity(turnapi.TurnPolicyName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in turnapi.TurnPolicyInput) (turnapi.TurnPolicyResult, error) {
			if in.SessionID != "s" {
				t.Errorf("policy asked for session %q", in.SessionID)
			}
			return turnapi.TurnPolicyResult{ApprovalPolicy: "deny"}, nil
		})
	env.OnActivity(turnapi.CallModelName, mock.Anything, mock.Anything).Return(riskyThenText(risky))
	var plans [][]turnapi.CallPlan
	env.OnActivity(turnapi.ExecuteToolsName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in turnapi.ExecuteToolsInput) (turnapi.ExecuteToolsResult, error) {
			plans = append(plans, in.Plan)
			return turnapi.ExecuteToolsResult{}, nil
		})
	env.OnActivity(turnapi.FinishTurnName, mock.Anything, mock.Anything).Return(turnapi.FinishTurnResult{}, nil)
	crafted := TurnInput{SessionID: "s", TurnNumber: 1, MaxIterations: 10,
		Approvals: ApprovalSettings{Mode: ApprovalOff},
		Resume:    &TurnCarry{State: NewTurnState(10), Grants: turnapi.Grants{Session: []string{risky.GrantKey()}}}}
	env.ExecuteWorkflow(TurnWorkflowName, crafted)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 || len(plans[0]) != 1 || plans[0][0].Action != turnapi.PlanRefused {
		t.Fatalf("plans = %+v, want the dangerous call refused", plans)
	}
}

// riskyThenText is a CallModel that asks for one terminal call assessed as
// risk, then answers with text.
func riskyThenText(risk turnapi.Assessment) func(context.Context, turnapi.CallModelInput) (turnapi.CallModelResult, error) {
	calls := 0
	return func(context.Context, turnapi.CallModelInput) (turnapi.CallModelResult, error) {
		calls++
		if calls > 1 {
			return textReply(), nil
		}
		r := toolReply("terminal")
		r.ToolCalls[0].Risk = risk
		return r, nil
	}
}
