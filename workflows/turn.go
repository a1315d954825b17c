package workflows

import (
	"errors"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TurnWorkflow runs one conversation turn: the user's message in, model calls
// and tool batches until a final answer or a stop, the outcome out. Every
// decision is a pure function (decide, decideToolCalls, decideEmpty, ...);
// conductTurn only sequences activities. A turn its session's coordinator
// started tells the coordinator how it ended (reportEnd) when its input or
// a coordinator run asks it to (SignalReportEnd); else the run that started
// it gets the outcome as its child's result.
func TurnWorkflow(ctx workflow.Context, in TurnInput) (ConversationResult, error) {
	ctx = withEpoch(ctx)
	var st TurnState
	res, err := conductTurn(ctx, in, &st)
	if in.ReportEnd || askedToReport(ctx) {
		reportEnd(ctx, in.SessionID, &st, res, err)
	}
	return res, err
}

// askedToReport reports whether a coordinator run asked the turn to signal
// its end (SignalReportEnd, changeTurnEndAsked). The turn looks in the
// workflow task that completes it, so an ask arriving later makes the
// server run that task again, and the turn then reports.
func askedToReport(ctx workflow.Context) bool {
	asks := workflow.GetSignalChannel(ctx, SignalReportEnd)
	asked := false
	for asks.ReceiveAsync(nil) {
		asked = true
	}
	return asked
}

// reportEnd signals the session's coordinator the turn's end, unless the
// turn continues as new, and waits until the signal is delivered (Temporal
// does not deliver a signal whose sender has closed). A steer that reaches
// the turn meanwhile was not in it: such steers go in another signal
// (ConversationResult.Late), until none came; the turn then completes in
// the workflow task of its last look, so a steer arriving later still
// makes the server run that task again.
func reportEnd(ctx workflow.Context, sessionID string, st *TurnState, res ConversationResult, err error) {
	if workflow.IsContinueAsNewError(err) || !has(ctx, changeTurnEndSignal) {
		return
	}
	turnID := workflow.GetInfo(ctx).WorkflowExecution.ID
	if err != nil {
		msg := turnapi.BoundError(errorMessage(err))
		res = ConversationResult{Failed: true, TurnExitReason: StopError, Error: &msg, SessionID: sessionID}
	}
	res.TurnID = turnID
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	to := SessionWorkflowID(sessionID)
	for {
		if err := workflow.SignalExternalWorkflow(dctx, to, "", SignalTurnEnded, res).Get(dctx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("the session's coordinator was not told the turn's end", "error", err)
		}
		yieldToHandlers(dctx)
		late := drainSteers(dctx, st)
		if len(late) == 0 {
			return
		}
		res = ConversationResult{TurnID: turnID, SessionID: sessionID, PendingSteers: late, Late: true}
	}
}

// conductTurn is the turn itself.
func conductTurn(ctx workflow.Context, in TurnInput, st *TurnState) (ConversationResult, error) {
	asked := in // what the sender set, before defaults
	in = in.withDefaults()
	if in.ReportTo != "" {
		ctx = workflow.WithValue(ctx, reportToKey{}, in.ReportTo)
	}
	turnID := workflow.GetInfo(ctx).WorkflowExecution.ID
	startedAt := workflow.Now(ctx)
	*st = NewTurnState(in.MaxIterations)
	// Model calls and tool batches run under workCtx, which an interrupt
	// cancels; bookkeeping runs under ctx.
	workCtx, cancelWork := workflow.WithCancel(ctx)
	gate := &humanGate{}
	if err := listen(ctx, turnID, st, gate, cancelWork); err != nil {
		return ConversationResult{}, err
	}

	runs, iterations := 0, 0
	if in.Resume != nil {
		*st, startedAt, gate.grants, runs = in.Resume.State, in.Resume.StartedAt, in.Resume.Grants, in.Resume.Runs+1
		if err := reloadPolicy(ctx, &in, gate); err != nil {
			return ConversationResult{}, err
		}
	} else {
		var begun turnapi.BeginTurnResult
		err := bookkeep(ctx, turnapi.BeginTurnName, turnapi.BeginTurnInput{
			TurnID: turnID, SessionID: in.SessionID, TurnNumber: in.TurnNumber,
			Model: in.Model, UserMessage: in.UserMessage, StartedAt: startedAt, Workdir: in.Workdir, Tools: in.Tools,
			DelegatedFrom: in.DelegatedFrom, Owner: in.Owner, CompactionRatio: askedRatio(in.Compaction), Images: in.Images,
		}).Get(ctx, &begun)
		if err != nil {
			return ConversationResult{}, err
		}
		st.Providers = begun.Providers
		st.Steers = append(st.Steers, in.Steers...)
		gate.grants = begun.Grants
		// Model settings the sender left unset are the worker's.
		in, st.Model = withWorkerModel(in, asked, begun.Worker), workerModelName(begun.Worker)
		// The serving worker's policy bounds the sender's; the narrowed
		// input is what a continue-as-new carries.
		in.Approvals.Mode = narrowMode(in.Approvals.Mode, ApprovalMode(begun.ApprovalPolicy))
		st.Context.SessionID, st.Context.Tokens = begun.SessionID, begun.ContextTokens
	}

	for st.Stop == "" {
		if shouldContinueAsNew(in.ContinueEvery, iterations, workflow.GetInfo(ctx).GetContinueAsNewSuggested()) {
			drainControl(ctx, st)
			if !st.Interrupted {
				in.Resume = &TurnCarry{State: *st, StartedAt: startedAt, Grants: gate.grants, Runs: runs}
				// An ask to report the end holds for the next run too.
				in.ReportEnd = in.ReportEnd || askedToReport(ctx)
				return ConversationResult{}, workflow.NewContinueAsNewError(ctx, TurnWorkflowName, in)
			}
		}
		iterations++
		if st.stopIfInterrupted() {
			break
		}
		if needsCompaction(st.Context, in.Compaction.Threshold) {
			compact(workCtx, in, turnID, st, turnapi.CompactPreflight)
			if st.stopIfInterrupted() {
				break
			}
		}
		if !st.Budget.Consume() {
			graceCall(workCtx, in, turnID, st)
			break
		}
		reply, err := callModel(workCtx, in, turnID, st, true)
		if st.stopIfInterrupted() {
			break
		}
		if err != nil {
			if compactAfterRefusal(workCtx, in, turnID, st, err) {
				st.Budget.Refund()
				continue
			}
			if st.stopIfInterrupted() {
				break
			}
			if next, ok := fallBack(*st, err); ok {
				*st = next
				st.Budget.Refund()
				continue
			}
			st.stop(modelFailureStop(err))
			break
		}
		st.Context = afterCall(st.Context, reply.ContextTokens, in.Compaction.Threshold)
		var step Step
		step, *st = decide(*st, reply, decideLimits(ctx, in.Limits, reply))
		st.note("model call %d: %s", st.Calls, reply.Kind)
		switch step.Kind {
		case StepRecall:
			st.Budget.Refund()
		case StepRunTools:
			step.Plan = applyHumanGates(ctx, in, st, gate, reply, step.Plan)
			if !st.stopIfInterrupted() {
				runTools(ctx, workCtx, in, turnID, st, reply, step)
			}
		case StepFinish, StepStop:
			st.Final = step.Final
			st.stop(step.Reason, "")
		}
	}
	// Steers that arrived after the last model call are handed back, to be
	// the session's next message; the outcome is recorded even if the
	// workflow itself is being cancelled.
	st.Steers = drainSteers(ctx, st)
	finishCtx, _ := workflow.NewDisconnectedContext(ctx)
	markStopReason(finishCtx, st.Stop)
	return finish(finishCtx, in, turnID, startedAt, st)
}

// callModel makes one model call (with or without tools) and accounts for it.
func callModel(ctx workflow.Context, in TurnInput, turnID string, st *TurnState, withTools bool) (turnapi.CallModelResult, error) {
	var reply turnapi.CallModelResult
	next := st.Next
	st.Next = NextCall{}
	req := turnapi.CallModelInput{
		TurnID: turnID, SessionID: st.Context.session(in.SessionID), Call: st.nextCall(), Model: in.Model,
		ToolsEnabled: withTools, Tools: in.Tools, ExtraUserMessage: next.Nudge, Workdir: in.Workdir,
		Provider: st.Provider, MaxTokens: next.MaxTokens, PrefillFrom: next.PrefillFrom, ContinueFrom: next.ContinueFrom,
		Steers:      drainSteers(ctx, st),
		IdleTimeout: in.ModelTimeout, MaxRetryAfter: in.MaxRetryAfter,
	}
	hasFallback := st.Provider+1 < st.Providers
	err := workflow.ExecuteActivity(modelOptions(ctx, in, hasFallback), turnapi.CallModelName, req).Get(ctx, &reply)
	st.Usage = st.Usage.Add(reply.Usage)
	if reply.Model != "" {
		st.Model = reply.Model
	}
	return reply, err
}

// runTools executes a planned batch, feeds the guardrail controller and
// stops the turn when the step or a guardrail hook says so. A batch of quick
// calls runs as a local activity under ctx: it takes milliseconds, so an
// interrupt lets it finish; any other batch runs as an activity under
// workCtx, which an interrupt cancels.
func runTools(ctx, workCtx workflow.Context, in TurnInput, turnID string, st *TurnState, reply turnapi.CallModelResult, step Step) {
	st.CurrentTool = reply.ToolCalls[0].Name
	defer func() { st.CurrentTool = "" }()
	// delegate_task calls run as child turns before the batch; the batch
	// answers them with their outcomes. Only a reply that calls
	// delegate_task reaches these commands.
	if delegates(reply, step.Plan) {
		step.Plan = runDelegations(ctx, workCtx, in, turnID, st, reply, step.Plan)
		if st.Interrupted {
			// The interrupt stopped the tasks: their outcomes are stored
			// as the batch's answers, and nothing else of the batch runs.
			workCtx = ctx
			step.Plan = skipUndelegated(reply, step.Plan)
		}
	}
	var res turnapi.ExecuteToolsResult
	batch := turnapi.ExecuteToolsInput{
		TurnID: turnID, SessionID: st.Context.session(in.SessionID), Call: st.Calls, AssistantMessageID: reply.MessageID,
		Workdir: in.Workdir, Plan: step.Plan, Reveal: step.Reveal, Explanation: step.Explanation, Tools: in.Tools,
		ApprovalMode: string(in.Approvals.Mode),
	}
	var err error
	remote := true
	if runsLocally(reply, step.Plan) && has(ctx, changeLocalActivities) {
		err = workflow.ExecuteLocalActivity(localToolOptions(ctx, in), turnapi.ExecuteToolsName, batch).Get(ctx, &res)
		// A quick batch that failed or hung goes the long way; the claims
		// make the second run find what the first one did.
		remote = err != nil && !st.Interrupted
	}
	if remote {
		err = workflow.ExecuteActivity(toolOptions(workCtx, in), turnapi.ExecuteToolsName, batch).Get(workCtx, &res)
	}
	if err != nil {
		answerCalls(ctx, batch, st.Interrupted, failureText(err))
	}
	if st.stopIfInterrupted() {
		return
	}
	if err != nil {
		st.stop(StopError, errorMessage(err))
		return
	}
	st.AfterTools = true
	st.Context.Tokens += res.AddedTokens
	st.Guardrail = observeBatch(st.Guardrail, reply, res)
	st.note("tools: %s (%d failed)", toolNames(reply), res.Failed)
	if step.Refund {
		st.Budget.Refund()
	}
	stopAfter := step.StopAfter
	if res.HookHalt != "" {
		stopAfter = StopGuardrailHalt
	}
	if stopAfter == StopGuardrailHalt && len(res.ResultMessageIDs) > 0 {
		st.Final = []int64{res.ResultMessageIDs[len(res.ResultMessageIDs)-1]} // the explanation
	}
	if stopAfter != "" {
		st.stop(stopAfter, "")
	}
}

// answerCalls follows a batch that ended with an error (interrupted, timed
// out or failed), in runs that have changeAnswerCalls: every call the batch
// left without a stored result is answered (not run, or outcome unknown),
// so the conversation never holds a call without its result. It runs even
// when the workflow itself is being cancelled.
func answerCalls(ctx workflow.Context, batch turnapi.ExecuteToolsInput, interrupted bool, reason string) {
	if !has(ctx, changeAnswerCalls) {
		return
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	in := turnapi.AnswerCallsInput{Batch: batch, Interrupted: interrupted}
	if !interrupted {
		in.Reason = reason
	}
	var out turnapi.AnswerCallsResult
	if err := bookkeep(dctx, turnapi.AnswerCallsName, in).Get(dctx, &out); err != nil {
		workflow.GetLogger(ctx).Warn("tool calls left without a result", "call", batch.Call, "error", err)
	}
}

// failureText is an activity failure as the model may read it: the
// application error's own message, without its type and retry flags.
func failureText(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Message() != "" {
		return appErr.Message()
	}
	return errorMessage(err)
}

// graceCall is the one tool-less call made once the budget is spent: the
// model summarises its progress (max_iterations), or the turn ends without
// an answer (budget_exhausted).
func graceCall(ctx workflow.Context, in TurnInput, turnID string, st *TurnState) {
	st.GraceCall = true
	st.Next = NextCall{Nudge: SummaryRequest}
	reply, err := callModel(ctx, in, turnID, st, false)
	// The context is at its largest here: a refusal as too long is
	// answered by a compaction, as in the loop.
	for err != nil && compactAfterRefusal(ctx, in, turnID, st, err) {
		st.Next = NextCall{Nudge: SummaryRequest}
		reply, err = callModel(ctx, in, turnID, st, false)
	}
	if st.stopIfInterrupted() {
		return
	}
	if err != nil {
		st.stop(StopBudgetExhausted, errorMessage(err))
		return
	}
	if reply.TextChars == 0 || reply.Hidden {
		st.stop(StopBudgetExhausted, "")
		return
	}
	st.Final = []int64{reply.MessageID}
	st.stop(StopMaxIterations, "")
}

// finish records the outcome in the store and builds the result.
// Steers that arrive while the outcome is recorded are handed back too
// (the signal listener holds st).
func finish(ctx workflow.Context, in TurnInput, turnID string, startedAt time.Time, st *TurnState) (ConversationResult, error) {
	var done turnapi.FinishTurnResult
	err := bookkeep(ctx, turnapi.FinishTurnName, turnapi.FinishTurnInput{
		TurnID: turnID, SessionID: st.Context.session(in.SessionID), TurnNumber: in.TurnNumber, Model: modelUsed(in, *st),
		Status: st.Stop.Status(), ExitReason: string(st.Stop), Error: turnapi.BoundError(st.Err),
		APICalls: st.Calls, Usage: st.Usage, FinalParts: st.Final,
		StartedAt: startedAt, EndedAt: workflow.Now(ctx),
	}).Get(ctx, &done)
	if err != nil {
		return ConversationResult{}, err
	}
	out := OutcomeOf(st.Stop, done.HasFinal)
	res := ConversationResult{
		Completed: out.Completed, Partial: out.Partial, Interrupted: out.Interrupted, Failed: out.Failed,
		TurnExitReason: st.Stop, APICalls: st.Calls,
		SessionID: in.SessionID, TurnID: turnID, Model: modelUsed(in, *st), Usage: st.Usage,
		ActiveSessionID: st.Context.session(in.SessionID), Compactions: st.Context.Compactions,
	}
	if done.HasFinal {
		res.FinalResponse = &done.FinalResponse
		res.FinalMessageID, res.FinalClipped = done.FinalMessageID, done.Clipped
	}
	// A steer can arrive with the record's answer, in the same workflow
	// task: the listener takes it first, then the channel is emptied.
	yieldToHandlers(ctx)
	res.PendingSteers = drainSteers(ctx, st)
	if st.Err != "" {
		msg := turnapi.BoundError(st.Err)
		res.Error = &msg
	}
	return res, nil
}

// fallbackClasses are the model failures that move a turn to the next
// provider when there is one: another provider may have quota, a valid
// key or capacity, and one that answers with something other than the
// protocol (invalid_response) or keeps cutting its replies off
// (truncated_reply), after its own attempts, is broken for now. These two
// classes are as new as this rule: no recorded history holds them, so
// adding them changes no replayed decision.
var fallbackClasses = map[string]bool{
	string(turnapi.ClassRateLimit): true, string(turnapi.ClassBilling): true,
	string(turnapi.ClassAuth): true, string(turnapi.ClassOverloaded): true,
	string(turnapi.ClassInvalidResponse): true, string(turnapi.ClassTruncatedReply): true,
}

// fallBack moves to the next provider after a failure that another provider
// may not have. Pure.
func fallBack(st TurnState, err error) (TurnState, bool) {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !fallbackClasses[appErr.Type()] || st.Provider+1 >= st.Providers {
		return st, false
	}
	st.Provider++
	return st, true
}

// errorMessage extracts the most useful text from an activity failure: the
// application error's message, or the innermost cause (e.g. a timeout).
func errorMessage(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return turnapi.BoundError(appErr.Error())
	}
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		return "timed out (" + strings.ToLower(strings.TrimPrefix(timeout.TimeoutType().String(), "TIMEOUT_TYPE_")) + ")"
	}
	for next := errors.Unwrap(err); next != nil; next = errors.Unwrap(err) {
		err = next
	}
	return turnapi.BoundError(err.Error())
}

func toolNames(r turnapi.CallModelResult) string {
	names := make([]string, 0, len(r.ToolCalls))
	for _, c := range r.ToolCalls {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}
