package workflows

import (
	"fmt"

	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// StepKind is what the loop does after a model reply.
type StepKind int

// Steps after a reply.
const (
	// StepRecall calls the model again (recovery: nothing new in the
	// conversation, the budget is refunded).
	StepRecall StepKind = iota
	// StepRunTools executes the reply's tool calls as planned.
	StepRunTools
	// StepFinish ends the turn with Step.Final as the answer.
	StepFinish
	// StepStop ends the turn without running anything more.
	StepStop
)

// Step is the decision taken after a reply.
type Step struct {
	Kind StepKind
	// Reason is the stop reason of StepFinish and StepStop.
	Reason StopReason
	// Final are the replies forming the final answer (finish, stop).
	Final []int64
	// For StepRunTools:
	Plan        []turnapi.CallPlan
	Reveal      bool
	Explanation string
	// StopAfter ends the turn after the tool results are stored.
	StopAfter StopReason
	// Refund gives the iteration back (execute_code-only batches).
	Refund bool
}

// Texts of request-only nudges. Each is sent with one request and never
// stored in the conversation.
const (
	// EmptyNudge follows a reply with nothing in it.
	EmptyNudge = "Your last response was empty. Please provide a response."
	// PostToolNudge follows an empty reply to tool results (once per turn).
	PostToolNudge = "Your last response was empty. Please process the tool results above and continue with the task."
	// SummaryRequest is the grace call's request when the budget is used up.
	SummaryRequest = "You've reached the maximum number of tool-calling iterations allowed. " +
		"Please provide a final response summarizing what you've found and accomplished so far, " +
		"without calling any more tools."
)

// decide chooses the step after reply r; it returns the updated state, with
// Err set when the step stops the turn for a reason worth saying. Pure.
func decide(st TurnState, r turnapi.CallModelResult, lim loop.Limits) (Step, TurnState) {
	st.Next = NextCall{}
	switch r.Kind {
	case loop.ReplyToolCallCutOff:
		if lim.BrokenArgsAreInvalid && r.FinishReason != loop.FinishLength {
			// The model finished its reply: the arguments are broken,
			// not cut off, and more room would not mend them.
			return decideToolCalls(st, r, lim)
		}
		return decideCutOffToolCall(st, r, lim)
	case loop.ReplyToolCalls:
		return decideToolCalls(st, r, lim)
	case loop.ReplyTextCutOff:
		return decideCutOffText(st, r, lim)
	case loop.ReplyReasoningCutOff:
		return Step{Kind: StepStop, Reason: StopThinkingExhausted}, st
	case loop.ReplyText:
		st.Final = append(append([]int64(nil), st.Parts...), r.MessageID)
		return Step{Kind: StepFinish, Reason: StopTextResponse, Final: st.Final}, st
	default:
		return decideEmpty(st, r, lim)
	}
}

// decideCutOffToolCall re-asks a tool call cut off by the output limit with
// max_tokens doubled each time, then stops: truncated, saying why.
func decideCutOffToolCall(st TurnState, r turnapi.CallModelResult, lim loop.Limits) (Step, TurnState) {
	if st.TruncatedToolRetries >= lim.TruncatedToolRetries {
		st.Err = cutOffToolCallMessage(st.TruncatedToolRetries, r.FinishReason, lim.BaseMaxTokens<<st.TruncatedToolRetries)
		return Step{Kind: StepStop, Reason: StopTruncated}, st
	}
	st.TruncatedToolRetries++
	st.Next.MaxTokens = lim.BaseMaxTokens << st.TruncatedToolRetries
	return Step{Kind: StepRecall}, st
}

// cutOffToolCallMessage says why a turn ended truncated on a tool call.
func cutOffToolCallMessage(retries int, finish string, maxTokens int) string {
	if finish == loop.FinishLength {
		return fmt.Sprintf("the model's tool call was cut off by the output limit on %d attempts (the last allowed %d tokens); "+
			"no complete call arrived, nothing was run", retries+1, maxTokens)
	}
	return fmt.Sprintf("the model's tool call arguments ended mid-JSON on %d attempts; no complete call arrived, nothing was run", retries+1)
}

// decideCutOffText continues an answer cut off by the output limit, then
// stops with the partial text: truncated, saying so.
func decideCutOffText(st TurnState, r turnapi.CallModelResult, lim loop.Limits) (Step, TurnState) {
	st.Parts = append(append([]int64(nil), st.Parts...), r.MessageID)
	if st.LengthContinuations >= lim.LengthContinuations {
		st.Final = st.Parts
		st.Err = fmt.Sprintf("the answer was cut off by the output limit %d times; the text so far is shown, it is incomplete", len(st.Parts))
		return Step{Kind: StepStop, Reason: StopTruncated, Final: st.Final}, st
	}
	st.LengthContinuations++
	st.Next.ContinueFrom = st.Parts
	return Step{Kind: StepRecall}, st
}

// decideEmpty is the empty-reply ladder (a reply with no visible text and no
// tool calls; a broken stream's text was already salvaged by the activity):
// reuse the text sent with housekeeping tools; nudge once after tool results;
// continue a reasoning-only reply with its reasoning as prefill; nudge; fall
// back to the next provider; give up.
func decideEmpty(st TurnState, r turnapi.CallModelResult, lim loop.Limits) (Step, TurnState) {
	switch {
	case st.HousekeepingText != 0:
		st.Final = []int64{st.HousekeepingText}
		return Step{Kind: StepFinish, Reason: StopTextResponse, Final: st.Final}, st
	case st.AfterTools && !st.PostToolNudged:
		st.PostToolNudged = true
		st.Next.Nudge = PostToolNudge
	case r.Kind == loop.ReplyReasoningOnly && st.PrefillRetries < lim.PrefillRetries:
		st.PrefillRetries++
		st.Next.PrefillFrom = r.MessageID
	case st.EmptyRetries < lim.EmptyRetries:
		st.EmptyRetries++
		st.Next.Nudge = EmptyNudge
	case st.Provider+1 < st.Providers:
		st.Provider++
		st.EmptyRetries, st.PrefillRetries = 0, 0
	default:
		return Step{Kind: StepStop, Reason: StopEmptyResponseExhausted}, st
	}
	return Step{Kind: StepRecall}, st
}
