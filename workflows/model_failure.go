package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// modelFailureStop is how a turn ends when its model call failed beyond
// retries and fallbacks: a reply the provider kept cutting off ends it
// truncated, saying so; any other failure is an error. The message is the
// failure's own, without Temporal's decoration. Pure.
func modelFailureStop(err error) (StopReason, string) {
	var appErr *temporal.ApplicationError
	switch {
	case errors.As(err, &appErr) && appErr.Type() == string(turnapi.ClassTruncatedReply):
		return StopTruncated, "the model's reply was cut off before it finished, on every attempt: " + appErr.Message()
	case appErr != nil && appErr.Message() != "":
		return StopError, appErr.Message()
	}
	return StopError, errorMessage(err)
}
