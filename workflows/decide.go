package workflows

import "github.com/talaria-agent/talaria/activities"

// Action is what the loop does after a model reply.
type Action int

// Actions after a reply.
const (
	// ActRunTools executes the reply's tool calls, then calls the model again.
	ActRunTools Action = iota
	// ActFinish ends the turn with the reply as final answer.
	ActFinish
	// ActRetryEmpty calls again with a nudge after an empty reply.
	ActRetryEmpty
	// ActStopEmpty gives up after too many empty replies.
	ActStopEmpty
	// ActStopTruncated ends the turn: the reply was cut off.
	ActStopTruncated
)

// MaxEmptyRetries is how many empty replies are answered with a nudge.
const MaxEmptyRetries = 3

// EmptyNudge is the request-only message sent after an empty reply.
const EmptyNudge = "Your last response was empty. Please provide a response."

// SummaryRequest asks for a final answer when the budget is used up.
const SummaryRequest = "You've reached the maximum number of tool-calling iterations allowed. " +
	"Please provide a final response summarizing what you've found and accomplished so far, " +
	"without calling any more tools."

// decideAfterReply chooses the next step from a reply and the count of
// empty replies already retried in a row.
func decideAfterReply(r activities.CallModelResult, emptyRetries int) Action {
	switch {
	case len(r.ToolCalls) > 0:
		return ActRunTools
	case r.FinishReason == "length":
		return ActStopTruncated
	case r.TextChars > 0:
		return ActFinish
	case emptyRetries < MaxEmptyRetries:
		return ActRetryEmpty
	default:
		return ActStopEmpty
	}
}
