package workflows

import (
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// MemorySyncWorkflowName records a finished turn with the memory provider.
const MemorySyncWorkflowName = "MemorySyncWorkflow"

// MemorySyncWorkflowID is the id of the sync of a turn: once per turn.
func MemorySyncWorkflowID(turnID string) string {
	return "memory-sync/" + strings.ReplaceAll(turnID, "/", "_")
}

// MemorySyncWorkflow runs SyncMemory for a turn that has answered. Its
// session's coordinator (or a scheduled job's run) starts it and does not
// wait for it: the reply has gone, and the sync changes nothing in the
// session.
func MemorySyncWorkflow(ctx workflow.Context, in turnapi.SyncMemoryInput) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: 5 * time.Second},
	})
	return workflow.ExecuteActivity(actx, turnapi.SyncMemoryName, in).Get(ctx, nil)
}

// syncDue says whether a finished turn is recorded with the memory
// provider: its template asks for it and it answered. Pure.
func syncDue(tmpl TurnInput, res ConversationResult) bool {
	return tmpl.MemorySync && res.Completed && res.FinalResponse != nil
}

// startMemorySync starts the sync of a finished turn of sessionID (which
// went on in activeSessionID after a compaction) and does not wait for it,
// like a memory review.
func startMemorySync(ctx workflow.Context, sessionID, turnID, activeSessionID string) {
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            MemorySyncWorkflowID(turnID),
		TaskQueue:             TaskQueue,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	})
	if activeSessionID == sessionID {
		activeSessionID = ""
	}
	fut := workflow.ExecuteChildWorkflow(cctx, MemorySyncWorkflowName, turnapi.SyncMemoryInput{
		SessionID: sessionID, ActiveSessionID: activeSessionID, TurnID: turnID,
	})
	_ = fut.GetChildWorkflowExecution().Get(ctx, nil)
}
