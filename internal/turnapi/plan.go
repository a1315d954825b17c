package turnapi

// PlanAction says what to do with one tool call of a batch.
type PlanAction string

// Plan actions.
const (
	PlanRun         PlanAction = "run"          // run it (Note, if any, is a warning appended to the result)
	PlanUnknown     PlanAction = "unknown"      // answer "tool does not exist", listing the tools
	PlanInvalidArgs PlanAction = "invalid_args" // answer that the arguments are not valid JSON
	PlanSkip        PlanAction = "skip"         // not run because of another call; Note says why
	PlanBlocked     PlanAction = "blocked"      // blocked by a guardrail; Note is the reason
	PlanRefused     PlanAction = "refused"      // a command refused (not approved); Note is the result
	PlanAnswer      PlanAction = "answer"       // a clarify call; Note is the user's answer
)

// CallPlan is the decision for one call.
type CallPlan struct {
	ID     string
	Action PlanAction
	Note   string
	// Tasks are a delegated call's outcomes (PlanDelegated).
	Tasks []DelegateOutcome `json:",omitempty"`
}

// HaltExplanation is the assistant message stored when a guardrail stops a turn.
func HaltExplanation(reason string) string {
	return "I stopped here because a safety guardrail halted the tool calls: " + reason
}

// PlanIndex is a plan by call id; Get answers PlanRun for calls it does not mention.
type PlanIndex map[string]CallPlan

// PlanByID indexes a plan by call id.
func PlanByID(plan []CallPlan) PlanIndex {
	m := make(PlanIndex, len(plan))
	for _, p := range plan {
		m[p.ID] = p
	}
	return m
}

// Get returns the plan of call id: PlanRun when the plan does not
// mention it.
func (p PlanIndex) Get(id string) CallPlan {
	if c, ok := p[id]; ok {
		return c
	}
	return CallPlan{ID: id, Action: PlanRun}
}

// HaltPlan blocks one call of a batch with reason and skips all the others.
func HaltPlan(ids []string, blocked, reason string) []CallPlan {
	plan := make([]CallPlan, 0, len(ids))
	for _, id := range ids {
		p := CallPlan{ID: id, Action: PlanSkip, Note: SkippedAfterHalt}
		if id == blocked {
			p = CallPlan{ID: id, Action: PlanBlocked, Note: reason}
		}
		plan = append(plan, p)
	}
	return plan
}

// SkippedAfterHalt answers the calls of a batch a guardrail halted.
const SkippedAfterHalt = "Skipped: a guardrail halted this batch of tool calls, so this call was not run."
