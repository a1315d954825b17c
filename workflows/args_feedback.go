package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// decideLimits returns the limits decide takes for reply r, with the
// choices that depend on the code version this turn runs. The version is
// asked for only when r is a tool call whose arguments end mid-JSON in a
// reply the model finished, the one case changeArgsFeedback changes, so
// histories without it replay untouched.
func decideLimits(ctx workflow.Context, lim loop.Limits, r turnapi.CallModelResult) loop.Limits {
	if r.Kind == loop.ReplyToolCallCutOff && r.FinishReason != loop.FinishLength {
		lim.BrokenArgsAreInvalid = has(ctx, changeArgsFeedback)
	}
	return lim
}
