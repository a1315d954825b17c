package workflows

import (
	"testing"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/approval"
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
