package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// SummaryWorkflowName writes the summary of a session that ended (memory
// recall).
const SummaryWorkflowName = "SessionSummaryWorkflow"

// SummaryWorkflowID is the id of the summary of a session at its turn
// count: a session is summarised once per state, however often its end is
// noticed (a reset, an idle sweep, a command).
func SummaryWorkflowID(sessionID string, turns int) string {
	return fmt.Sprintf("summary/%s/%d", strings.ReplaceAll(sessionID, "/", "_"), turns)
}

// SummaryWorkflow runs SummarizeSession, after the session's last reply
// and off its path; it is started by the engine, never by a turn.
func SummaryWorkflow(ctx workflow.Context, in turnapi.SummarizeSessionInput) (turnapi.SummarizeSessionResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 3 * time.Minute,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: 5 * time.Second},
	})
	var res turnapi.SummarizeSessionResult
	err := workflow.ExecuteActivity(actx, turnapi.SummarizeSessionName, in).Get(ctx, &res)
	return res, err
}
