package workflows

// StopReason says why a turn ended.
type StopReason string

// Every way a turn can end.
const (
	// StopTextResponse: the model answered in text. The only completed ending.
	StopTextResponse StopReason = "text_response"
	// StopMaxIterations: the iteration budget ran out; a tool-less call
	// summarised the progress.
	StopMaxIterations StopReason = "max_iterations"
	// StopInterrupted: the user stopped the turn.
	StopInterrupted StopReason = "interrupted"
	// StopBudgetExhausted: the budget ran out and no summary could be made.
	StopBudgetExhausted StopReason = "budget_exhausted"
	// StopInvalidTool: the model kept calling tools that do not exist.
	StopInvalidTool StopReason = "invalid_tool"
	// StopTruncated: the reply was cut off by the output limit.
	StopTruncated StopReason = "truncated"
	// StopThinkingExhausted: the reasoning used the whole output budget.
	StopThinkingExhausted StopReason = "thinking_exhausted"
	// StopEmptyResponseExhausted: the model kept replying with nothing.
	StopEmptyResponseExhausted StopReason = "empty_response_exhausted"
	// StopGuardrailHalt: a guardrail blocked a tool call and halted the turn.
	StopGuardrailHalt StopReason = "guardrail_halt"
	// StopError: the model or the engine failed beyond retries.
	StopError StopReason = "error"
)

// Outcome is the set of flags a StopReason implies.
type Outcome struct {
	Completed, Partial, Interrupted, Failed bool
}

// OutcomeOf maps a stop reason to the result's flags. hasFinal says whether
// the turn produced any final text (an interrupted turn with text is partial).
func OutcomeOf(r StopReason, hasFinal bool) Outcome {
	switch r {
	case StopTextResponse:
		return Outcome{Completed: true}
	case StopInterrupted:
		return Outcome{Interrupted: true, Partial: hasFinal}
	case StopError:
		return Outcome{Failed: true}
	default:
		return Outcome{Partial: true}
	}
}

// Status is the turn's status word as recorded in the store.
func (r StopReason) Status() string {
	switch r {
	case StopTextResponse:
		return "completed"
	case StopInterrupted:
		return "interrupted"
	case StopError:
		return "failed"
	default:
		return "incomplete"
	}
}
