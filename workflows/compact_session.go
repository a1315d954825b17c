package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Names of the compaction asked for between turns.
const (
	// CompactSessionWorkflowName compacts a session's conversation now.
	CompactSessionWorkflowName = "CompactSessionWorkflow"
	// ChatCompactWorkflowName runs a chat's /compress and tells the chat.
	ChatCompactWorkflowName = "ChatCompactWorkflow"
)

// CompactSessionInput asks for one compaction of a session between turns.
type CompactSessionInput struct {
	// SessionID is the newest session of the lineage (a compacted session
	// is compacted no further: its child is).
	SessionID string
	// Turn is the turn template: model, working directory, tools and
	// timeouts, as a turn of the session would use them.
	Turn TurnInput
}

// CompactSessionWorkflow compacts a session's conversation now, whatever
// its size: the same compaction a turn runs past its threshold, into a
// child session the next turn continues in. Its id names the request, so a
// repeated request finds the first.
func CompactSessionWorkflow(ctx workflow.Context, in CompactSessionInput) (turnapi.CompressContextResult, error) {
	t := in.Turn
	var res turnapi.CompressContextResult
	err := workflow.ExecuteActivity(compactOptions(ctx, t), turnapi.CompressContextName, turnapi.CompressContextInput{
		TurnID: workflow.GetInfo(ctx).WorkflowExecution.ID, SessionID: in.SessionID,
		Model: t.Model, Workdir: t.Workdir, Reason: turnapi.CompactManual, Tools: t.Tools,
		IdleTimeout: t.ModelTimeout, MaxRetryAfter: t.MaxRetryAfter,
	}).Get(ctx, &res)
	return res, err
}

// ChatCompactInput is a chat's /compress.
type ChatCompactInput struct {
	Platform, ChatID string
	Compact          CompactSessionInput
}

// ChatCompactWorkflow runs a chat's /compress where the turns run (a
// child CompactSessionWorkflow on TaskQueue) and tells the chat how it
// went, once, from the gateway's task queue. Its id is the chat update's.
func ChatCompactWorkflow(ctx workflow.Context, in ChatCompactInput) error {
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	child := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: "compact/" + id, TaskQueue: TaskQueue,
	})
	var res turnapi.CompressContextResult
	err := workflow.ExecuteChildWorkflow(child, CompactSessionWorkflowName, in.Compact).Get(ctx, &res)
	send := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 10},
	})
	return workflow.ExecuteActivity(send, ChatSendName, ChatDeliverInput{
		Platform: in.Platform, ChatID: in.ChatID, Key: id, Text: CompactionReport(res, err),
	}).Get(ctx, nil)
}

// CompactionReport is what the person who asked for a compaction is told.
// Pure.
func CompactionReport(res turnapi.CompressContextResult, err error) string {
	switch {
	case err != nil:
		return "The compaction failed: " + errorMessage(err)
	case !res.Compacted:
		return "Nothing to compact: the conversation is still short."
	case res.Fallback:
		return fmt.Sprintf("Compacted without a model summary (the summary call failed): ~%d → ~%d tokens.", res.Before, res.After)
	}
	return fmt.Sprintf("Compacted: ~%d → ~%d tokens; the conversation goes on from the summary.", res.Before, res.After)
}
