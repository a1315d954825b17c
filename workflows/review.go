package workflows

import (
	"cmp"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// MemoryReviewWorkflowName reviews a conversation and updates memory.
const MemoryReviewWorkflowName = "MemoryReviewWorkflow"

// DefaultMemoryReviewEvery is how many turns of a session pass between two
// background memory reviews.
const DefaultMemoryReviewEvery = 10

// ReviewInstructions is the review turn's message.
const ReviewInstructions = "You are reviewing the conversation above to keep your long-term memory useful. " +
	"Use the memory tool to add durable facts about the user (target \"user\": preferences, environment, " +
	"recurring needs) and lessons for yourself (target \"memory\": what worked, pitfalls, conventions). " +
	"Skip anything transient or already recorded; replace or remove entries that are outdated; when memory " +
	"is full, consolidate. Reply with one line saying what you changed, or \"nothing to record\"."

// ReviewInput starts a memory review.
type ReviewInput struct {
	SessionID  string
	TurnNumber int
	// Turn is the template of the review turn (model, timeouts...).
	Turn TurnInput
}

// ReviewSessionID is the scratch session a review runs in.
func ReviewSessionID(sessionID string, turn int) string {
	return fmt.Sprintf("review.%s.%d", sessionID, turn)
}

// MemoryReviewWorkflow copies the recent conversation into a scratch
// session and runs a turn there that may only use the memory tool. It runs
// in the background: the user's turn has already answered, and its outcome
// never depends on the review.
func MemoryReviewWorkflow(ctx workflow.Context, in ReviewInput) (ConversationResult, error) {
	review := ReviewSessionID(in.SessionID, in.TurnNumber)
	err := workflow.ExecuteActivity(storeOptions(ctx), turnapi.PrepareReviewName, turnapi.PrepareReviewInput{
		SessionID: in.SessionID, ReviewSessionID: review, MaxMessages: 60,
	}).Get(ctx, nil)
	if err != nil {
		return ConversationResult{}, err
	}
	turn := in.Turn
	turn.Tools, turn.MaxIterations = []string{"memory"}, 8
	return unattendedTurn(ctx, turn, review, ReviewInstructions)
}

// unattendedTurn runs text as turn 1 of its own session, as a child
// workflow, with nobody to ask: commands that need approval are refused,
// and the session gets no memory review of its own.
func unattendedTurn(ctx workflow.Context, turn TurnInput, sessionID, text string) (ConversationResult, error) {
	turn.SessionID, turn.TurnNumber, turn.UserMessage = sessionID, 1, text
	turn.Approvals = ApprovalSettings{Mode: ApprovalDeny}
	turn.MemoryReviewEvery = -1
	cctx := workflow.WithChildOptions(ctx, withTurnVisibility(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: TurnWorkflowID(sessionID, 1), TaskQueue: TaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, turn))
	var res ConversationResult
	err := workflow.ExecuteChildWorkflow(cctx, TurnWorkflowName, turn).Get(ctx, &res)
	return res, err
}

// reviewDue says whether the turn just finished calls for a memory review. Pure.
func reviewDue(every, turnNumber int) bool {
	every = cmp.Or(every, DefaultMemoryReviewEvery)
	return every > 0 && turnNumber > 0 && turnNumber%every == 0
}
