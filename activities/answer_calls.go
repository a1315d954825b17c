package activities

import (
	"context"
	"fmt"

	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// AnswerCalls makes sure every call id of the batch's assistant message has
// exactly one result in the store once the batch is over. Results the batch
// stored are kept; a call without one is claimed now: a claim that was
// already there means an attempt started it (its outcome is unknown), a new
// claim means nothing ran it, and nothing will (an executor that comes later
// finds the claim, and the stored answer under the same key).
func (a *Activities) AnswerCalls(ctx context.Context, in turnapi.AnswerCallsInput) (turnapi.AnswerCallsResult, error) {
	b := in.Batch
	msg, err := a.Store.Message(ctx, b.AssistantMessageID)
	if err != nil {
		return turnapi.AnswerCallsResult{}, fmt.Errorf("answer calls: load message %d: %w", b.AssistantMessageID, err)
	}
	stored, err := a.storedResults(ctx, b, msg.ToolCalls)
	if err != nil {
		return turnapi.AnswerCallsResult{}, fmt.Errorf("answer calls: %w", err)
	}
	if len(stored) == len(msg.ToolCalls) {
		return turnapi.AnswerCallsResult{}, nil
	}
	if b.Reveal && msg.Hidden {
		if err := a.Store.RevealMessage(ctx, msg.ID); err != nil {
			return turnapi.AnswerCallsResult{}, fmt.Errorf("answer calls: %w", err)
		}
	}
	plan := turnapi.PlanByID(b.Plan)
	ran := map[string]tools.Result{}
	for _, tc := range msg.ToolCalls {
		if r, ok := stored[tc.ID]; ok {
			ran[tc.ID] = r
			plan[tc.ID] = turnapi.CallPlan{ID: tc.ID, Action: turnapi.PlanRun}
			continue
		}
		if p := plan.Get(tc.ID); p.Action == turnapi.PlanDelegated {
			r, err := a.delegationResult(ctx, tc.ID, p.Tasks) // the tasks ran: their reports are the answer
			if err != nil {
				return turnapi.AnswerCallsResult{}, fmt.Errorf("answer calls: %w", err)
			}
			ran[tc.ID] = r
			continue
		}
		if plan.Get(tc.ID).Action != turnapi.PlanRun {
			continue // answered from the plan, as the batch would have
		}
		started, err := a.Store.ClaimTool(ctx, toolKey(b.TurnID, b.Call, tc.ID))
		if err != nil {
			return turnapi.AnswerCallsResult{}, fmt.Errorf("answer calls: %w", err)
		}
		ran[tc.ID] = tools.Result{CallID: tc.ID, Name: tc.Function.Name, IsError: true,
			Content: UnansweredCall(started, a.idempotent(tc.Function.Name), in.Interrupted, in.Reason)}
	}
	rows, _ := ComposeResults(b, msg.ToolCalls, plan, ran, a.allowed(b.Tools))
	missing := make([]models.Message, 0, len(rows))
	for _, r := range rows {
		if _, ok := stored[r.ToolCallID]; !ok {
			missing = append(missing, r)
		}
	}
	storeCtx, cancel := storeContext(ctx)
	defer cancel()
	saved, err := a.Store.AppendMessages(storeCtx, missing)
	if err != nil {
		return turnapi.AnswerCallsResult{}, fmt.Errorf("answer calls: persist answers: %w", err)
	}
	var out turnapi.AnswerCallsResult
	for _, m := range saved {
		out.ResultMessageIDs = append(out.ResultMessageIDs, m.ID)
	}
	a.logger().Info("answered tool calls left without a result", "turn_id", b.TurnID, "call", b.Call,
		"answered", len(saved), "interrupted", in.Interrupted)
	return out, nil
}

// UnansweredCall is the answer to a call its batch left without a result:
// started tells whether an attempt had claimed (begun) it. A started call
// of a tool with effects may or may not have had them. Pure.
func UnansweredCall(started, idempotent, interrupted bool, reason string) string {
	why := "the turn was interrupted"
	if !interrupted {
		why = "the tool batch failed"
		if reason != "" {
			why += " (" + reason + ")"
		}
	}
	switch {
	case !started:
		return errorResult("cancelled: " + why + " before this call started; it was not run.")
	case idempotent:
		return errorResult("interrupted: " + why + " while this call ran, and no result was recorded; it had no side effects, so it can be run again.")
	default:
		return errorResult("interrupted: " + why + " while this call ran, and no result was recorded. " + OutcomeUnknown)
	}
}
