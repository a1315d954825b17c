package loop

// ReplyKind classifies a model reply for the loop's next decision.
type ReplyKind int

// Kinds of replies.
const (
	// ReplyText has visible text (after reasoning blocks are removed).
	ReplyText ReplyKind = iota
	// ReplyToolCalls asks for tools; their names and arguments are checked
	// separately.
	ReplyToolCalls
	// ReplyEmpty has no visible text, no reasoning and no tool calls.
	ReplyEmpty
	// ReplyReasoningOnly has reasoning but no visible text and no calls.
	ReplyReasoningOnly
	// ReplyTextCutOff is visible text cut off by the output limit.
	ReplyTextCutOff
	// ReplyReasoningCutOff is reasoning cut off by the output limit before
	// any visible text: the reasoning used the whole budget.
	ReplyReasoningCutOff
	// ReplyToolCallCutOff is a tool call cut off by the output limit (or
	// arguments that end mid-JSON).
	ReplyToolCallCutOff
)

var replyKindNames = [...]string{"text", "tool_calls", "empty", "reasoning_only", "text_cut_off", "reasoning_cut_off", "tool_call_cut_off"}

func (k ReplyKind) String() string {
	if k < 0 || int(k) >= len(replyKindNames) {
		return "reply_kind(?)"
	}
	return replyKindNames[k]
}

// ReplyShape is what ClassifyReply looks at.
type ReplyShape struct {
	// VisibleChars is the length of the text with reasoning blocks removed.
	VisibleChars int
	// ReasoningChars counts reasoning, separate or inline.
	ReasoningChars int
	ToolCalls      int
	// TruncatedArgs counts calls whose arguments end mid-JSON.
	TruncatedArgs int
	FinishReason  string
}

// FinishLength is the finish reason of a reply cut off by the output limit.
const FinishLength = "length"

// ClassifyReply returns the kind of a reply.
func ClassifyReply(s ReplyShape) ReplyKind {
	cutOff := s.FinishReason == FinishLength
	switch {
	case s.ToolCalls > 0 && (cutOff || s.TruncatedArgs > 0):
		return ReplyToolCallCutOff
	case s.ToolCalls > 0:
		return ReplyToolCalls
	case cutOff && s.VisibleChars > 0:
		return ReplyTextCutOff
	case cutOff && s.ReasoningChars > 0:
		return ReplyReasoningCutOff
	case s.VisibleChars > 0:
		return ReplyText
	case s.ReasoningChars > 0:
		return ReplyReasoningOnly
	}
	return ReplyEmpty
}

// Discarded reports whether a reply of this kind is kept out of the
// conversation when it is stored: the loop asks again instead (or stops),
// and a provider should never see such a reply in later history.
func (k ReplyKind) Discarded() bool {
	switch k {
	case ReplyText, ReplyToolCalls:
		return false
	}
	return true
}
