package workflows

import (
	"testing"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

func TestApprovalOutcome(t *testing.T) {
	for _, tt := range []struct {
		name    string
		decided bool
		d       *ApprovalDecision
		want    string
	}{
		{"once", true, &ApprovalDecision{Choice: turnapi.ChoiceOnce}, "once"},
		{"session", true, &ApprovalDecision{Choice: turnapi.ChoiceSession}, "session"},
		{"always", true, &ApprovalDecision{Choice: turnapi.ChoiceAlways}, "always"},
		{"deny", true, &ApprovalDecision{Choice: turnapi.ChoiceDeny}, "deny"},
		{"a choice no sender makes", true, &ApprovalDecision{Choice: "rm -rf /"}, "other"},
		{"timed out", false, nil, "timeout"},
		{"interrupted while waiting", true, nil, "interrupted"},
	} {
		if got := approvalOutcome(tt.decided, tt.d); got != tt.want {
			t.Errorf("%s: approvalOutcome = %q, want %q", tt.name, got, tt.want)
		}
	}
}
