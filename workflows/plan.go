package workflows

import (
	"slices"

	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// housekeepingTools keep the agent's own notes; text sent alongside them is
// an answer the model may consider given.
var housekeepingTools = map[string]bool{"todo": true, "memory": true}

// refundedTools do not use up the iteration budget when a batch runs only them.
var refundedTools = map[string]bool{"execute_code": true}

// SkippedInvalidBatch answers the valid calls of a batch that also called an
// unknown tool: none of the batch runs.
const SkippedInvalidBatch = "Skipped: another tool call in this batch named a tool that does not exist, " +
	"so none of the batch was run. Call the tools again with valid names."

// decideToolCalls plans a batch of complete tool calls: invalid arguments are
// re-asked silently a few times, then answered with errors; unknown tools
// are answered (the rest of the batch skipped) and counted; otherwise the
// built-in guardrail controller checks each call.
func decideToolCalls(st TurnState, r turnapi.CallModelResult, lim loop.Limits) (Step, TurnState) {
	st.Parts = nil // an answer being continued was abandoned for tools
	invalid, unknown := 0, 0
	for _, c := range r.ToolCalls {
		if c.Unknown {
			unknown++
		} else if c.Args != loop.ArgsValid {
			invalid++
		}
	}
	if invalid > 0 && unknown == 0 && st.InvalidJSONRetries < lim.InvalidJSONRetries {
		st.InvalidJSONRetries++
		return Step{Kind: StepRecall}, st
	}
	step := Step{Kind: StepRunTools, Reveal: true}
	switch {
	case unknown > 0:
		st.InvalidToolRetries++
		for _, c := range r.ToolCalls {
			p := turnapi.CallPlan{ID: c.ID, Action: turnapi.PlanSkip, Note: SkippedInvalidBatch}
			if c.Unknown {
				p = turnapi.CallPlan{ID: c.ID, Action: turnapi.PlanUnknown}
			}
			step.Plan = append(step.Plan, p)
		}
		if st.InvalidToolRetries >= lim.InvalidToolRetries {
			step.StopAfter = StopInvalidTool
		}
		return step, st
	default:
		step.Plan, step.Explanation, step.StopAfter = guardBatch(st, r, lim)
	}
	st.HousekeepingText = housekeepingText(r)
	step.Refund = allIn(r.ToolCalls, refundedTools)
	return step, st
}

// guardBatch runs the built-in guardrail controller over a batch: warnings
// travel with the call; a halt blocks its call, skips the others and stops
// the turn with an explanation.
func guardBatch(st TurnState, r turnapi.CallModelResult, lim loop.Limits) ([]turnapi.CallPlan, string, StopReason) {
	plan := make([]turnapi.CallPlan, 0, len(r.ToolCalls))
	for _, c := range r.ToolCalls {
		if c.Args != loop.ArgsValid {
			plan = append(plan, turnapi.CallPlan{ID: c.ID, Action: turnapi.PlanInvalidArgs})
			continue
		}
		d := loop.CheckCall(lim.Guardrail, st.Guardrail, guardCall(c))
		switch d.Verdict {
		case loop.Halt:
			ids := make([]string, 0, len(r.ToolCalls))
			for _, other := range r.ToolCalls {
				ids = append(ids, other.ID)
			}
			return turnapi.HaltPlan(ids, c.ID, d.Reason), turnapi.HaltExplanation(d.Reason), StopGuardrailHalt
		case loop.Warn:
			plan = append(plan, turnapi.CallPlan{ID: c.ID, Action: turnapi.PlanRun, Note: d.Reason})
		default:
			plan = append(plan, turnapi.CallPlan{ID: c.ID, Action: turnapi.PlanRun})
		}
	}
	return plan, "", ""
}

// observeBatch feeds a batch's outcomes to the guardrail controller.
func observeBatch(g loop.GuardrailState, r turnapi.CallModelResult, res turnapi.ExecuteToolsResult) loop.GuardrailState {
	byID := make(map[string]turnapi.ToolCallRef, len(r.ToolCalls))
	for _, c := range r.ToolCalls {
		byID[c.ID] = c
	}
	for _, o := range res.Outcomes {
		if c, ok := byID[o.ID]; ok {
			g = loop.Observe(g, guardCall(c), o.Failed, o.Digest)
		}
	}
	return g
}

// guardCall is the controller's view of a call: its name and arguments'
// digest (equal arguments, equal digest).
func guardCall(c turnapi.ToolCallRef) loop.ToolCall {
	return loop.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Key}
}

// housekeepingText is the reply itself when it carries text and only
// housekeeping tool calls, else 0.
func housekeepingText(r turnapi.CallModelResult) int64 {
	if r.TextChars > 0 && allIn(r.ToolCalls, housekeepingTools) {
		return r.MessageID
	}
	return 0
}

func allIn(calls []turnapi.ToolCallRef, set map[string]bool) bool {
	return len(calls) > 0 && !slices.ContainsFunc(calls, func(c turnapi.ToolCallRef) bool { return !set[c.Name] })
}

// runsLocally reports whether a planned batch may run as a local activity:
// every call is either answered without running a tool or runs a quick one.
// Pure.
func runsLocally(r turnapi.CallModelResult, plan []turnapi.CallPlan) bool {
	byID := turnapi.PlanByID(plan)
	return !slices.ContainsFunc(r.ToolCalls, func(c turnapi.ToolCallRef) bool { return byID.Get(c.ID).Action == turnapi.PlanRun && !c.Quick })
}
