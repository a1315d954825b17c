package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Talaria's metrics counted in workflow code, through the worker's metrics
// handler: the SDK drops them while a workflow replays, so each decision
// counts once, and they issue no command.
const (
	// MetricApprovals counts the ends of approval waits by choice (once,
	// session, always, deny, timeout, interrupted, other: an unknown choice
	// from a raw signal, which denies the command).
	MetricApprovals = "talaria_approvals_total"
	// LabelChoice is MetricApprovals' label.
	LabelChoice = "choice"
)

// Ends of an approval wait that are not a person's choice.
const (
	approvalTimeout     = "timeout"
	approvalInterrupted = "interrupted"
	approvalOther       = "other"
)

// countApproval counts one approval wait that ended with choice.
func countApproval(ctx workflow.Context, choice string) {
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{LabelChoice: choice}).Counter(MetricApprovals).Inc(1)
}

// approvalOutcome is the choice label of an approval wait: the person's
// choice when one came (bounded to the known choices), else timeout when
// the wait ran out (decided is false), else interrupted. Pure.
func approvalOutcome(decided bool, d *ApprovalDecision) string {
	if d != nil {
		switch d.Choice {
		case turnapi.ChoiceOnce, turnapi.ChoiceSession, turnapi.ChoiceAlways, turnapi.ChoiceDeny:
			return string(d.Choice)
		}
		return approvalOther
	}
	if !decided {
		return approvalTimeout
	}
	return approvalInterrupted
}
