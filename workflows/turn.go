package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/activities"
)

// TurnWorkflow runs one conversation turn: the user's message in, model calls
// and tool batches until a text answer or the budget's end, the outcome out.
func TurnWorkflow(ctx workflow.Context, in TurnInput) (ConversationResult, error) {
	in = in.withDefaults()
	turnID := workflow.GetInfo(ctx).WorkflowExecution.ID
	startedAt := workflow.Now(ctx)
	st := NewTurnState(in.MaxIterations)

	err := workflow.ExecuteActivity(storeOptions(ctx), activities.BeginTurnName, activities.BeginTurnInput{
		TurnID: turnID, SessionID: in.SessionID, TurnNumber: in.TurnNumber,
		Model: in.Model, UserMessage: in.UserMessage, StartedAt: startedAt,
	}).Get(ctx, nil)
	if err != nil {
		return ConversationResult{}, err
	}

	for st.Stop == "" {
		if !st.Budget.Consume() {
			summarise(ctx, in, turnID, &st)
			break
		}
		reply, err := callModel(ctx, in, turnID, &st, true)
		if err != nil {
			st.stop(StopError, errorMessage(err))
			break
		}
		switch decideAfterReply(reply, st.EmptyRetries) {
		case ActRunTools:
			st.EmptyRetries = 0
			if err := runTools(ctx, in, turnID, &st, reply); err != nil {
				st.stop(StopError, errorMessage(err))
			}
		case ActFinish:
			st.FinalMessageID = reply.MessageID
			st.stop(StopTextResponse, "")
		case ActRetryEmpty:
			st.EmptyRetries++
			st.Nudge = EmptyNudge
		case ActStopEmpty:
			st.stop(StopEmptyResponseExhausted, "")
		case ActStopTruncated:
			st.FinalMessageID = reply.MessageID
			st.stop(StopTruncated, "")
		}
	}
	return finish(ctx, in, turnID, startedAt, st)
}

// callModel makes one model call (with or without tools) and accounts for it.
func callModel(ctx workflow.Context, in TurnInput, turnID string, st *TurnState, withTools bool) (activities.CallModelResult, error) {
	var reply activities.CallModelResult
	req := activities.CallModelInput{
		TurnID: turnID, SessionID: in.SessionID, Call: st.nextCall(), Model: in.Model,
		ToolsEnabled: withTools, ExtraUserMessage: st.Nudge, Workdir: in.Workdir,
	}
	st.Nudge = ""
	err := workflow.ExecuteActivity(modelOptions(ctx, in), activities.CallModelName, req).Get(ctx, &reply)
	st.Usage = st.Usage.Add(reply.Usage)
	return reply, err
}

// runTools executes a reply's tool calls; results go to the store.
func runTools(ctx workflow.Context, in TurnInput, turnID string, st *TurnState, reply activities.CallModelResult) error {
	st.CurrentTool = reply.ToolCalls[0].Name
	defer func() { st.CurrentTool = "" }()
	return workflow.ExecuteActivity(toolOptions(ctx, in), activities.ExecuteToolsName, activities.ExecuteToolsInput{
		TurnID: turnID, SessionID: in.SessionID, Call: st.Calls,
		AssistantMessageID: reply.MessageID, Workdir: in.Workdir,
	}).Get(ctx, nil)
}

// summarise makes the one tool-less call allowed once the budget is spent.
func summarise(ctx workflow.Context, in TurnInput, turnID string, st *TurnState) {
	st.Nudge = SummaryRequest
	reply, err := callModel(ctx, in, turnID, st, false)
	if err != nil || reply.TextChars == 0 {
		msg := ""
		if err != nil {
			msg = errorMessage(err)
		}
		st.stop(StopBudgetExhausted, msg)
		return
	}
	st.FinalMessageID = reply.MessageID
	st.stop(StopMaxIterations, "")
}

// finish records the outcome in the store and builds the result.
func finish(ctx workflow.Context, in TurnInput, turnID string, startedAt time.Time, st TurnState) (ConversationResult, error) {
	var done activities.FinishTurnResult
	err := workflow.ExecuteActivity(storeOptions(ctx), activities.FinishTurnName, activities.FinishTurnInput{
		TurnID: turnID, SessionID: in.SessionID, TurnNumber: in.TurnNumber, Model: in.Model,
		Status: st.Stop.Status(), ExitReason: string(st.Stop), Error: st.Err,
		APICalls: st.Calls, Usage: st.Usage, FinalMessageID: st.FinalMessageID,
		StartedAt: startedAt, EndedAt: workflow.Now(ctx),
	}).Get(ctx, &done)
	if err != nil {
		return ConversationResult{}, err
	}
	out := OutcomeOf(st.Stop, done.HasFinal)
	res := ConversationResult{
		Completed: out.Completed, Partial: out.Partial, Interrupted: out.Interrupted, Failed: out.Failed,
		TurnExitReason: st.Stop, APICalls: st.Calls,
		SessionID: in.SessionID, TurnID: turnID, Model: in.Model, Usage: st.Usage,
	}
	if done.HasFinal {
		res.FinalResponse = &done.FinalResponse
	}
	if st.Err != "" {
		res.Error = &st.Err
	}
	return res, nil
}

// errorMessage extracts the most useful text from an activity failure.
func errorMessage(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Error()
	}
	return err.Error()
}
