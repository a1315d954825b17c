package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/llm"
)

// modelFailureStop is how a turn ends when its model call failed beyond
// retries and fallbacks: a reply the provider kept cutting off ends it
// truncated, saying so; any other failure is an error. Pure.
func modelFailureStop(err error) (StopReason, string) {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Type() == string(llm.ClassTruncatedReply) {
		return StopTruncated, "the model's reply was cut off before it finished, on every attempt: " + appErr.Message()
	}
	return StopError, errorMessage(err)
}
