package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// InvalidEvent is the error type of a RecordEvent whose event the store
// would refuse (no turn, no kind, a kind too long) or whose data is above
// turnapi.MaxEventDataBytes: retrying cannot help, so it is not retried.
const InvalidEvent = "InvalidEvent"

// RecordEvent appends one live event that a workflow records itself: a
// wait on a person beginning or ending (turnapi.EventApproval and the
// others). Workflows treat the event as best effort: a failure is logged
// and the turn goes on.
//
// An attempt may store the event and still be run again: its completion
// was lost (the worker died after the commit; for a local activity, the
// workflow task that ran it is retried). So the event is stored only when
// it does not repeat the turn's last event (same kind and data, see
// models.Store.AppendEventUnlessRepeated), and a second attempt finds its
// own event there and stores nothing. That never drops an event that
// should be shown: the events recorded this way name their call
// ("call_id") and come in pairs (a wait begins, then it ends), so a turn
// never has a reason to show the same one twice in a row. It relies on no
// other writer of the turn's events coming between the two attempts, which
// holds while a turn waits on a person: the model call that asked has
// ended, and so has its publisher, and the tools of the batch have not
// started. Were one to come between them (an abandoned attempt of a model
// call still streaming), the event would be shown twice, which is harmless
// for a display stream.
func (a *Activities) RecordEvent(ctx context.Context, in turnapi.RecordEventInput) error {
	if n := turnapi.JSONLen(in.Data); n > turnapi.MaxEventDataBytes {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("record event %q of turn %s: data of %d bytes is above %d", in.Kind, in.TurnID, n, turnapi.MaxEventDataBytes),
			InvalidEvent, nil)
	}
	_, err := a.Store.AppendEventUnlessRepeated(ctx, models.Event{TurnID: in.TurnID, Kind: in.Kind, Data: in.Data})
	if errors.Is(err, models.ErrInvalidArgument) {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("record event: %v", err), InvalidEvent, nil)
	}
	if err != nil {
		return fmt.Errorf("record event %q: %w", in.Kind, err)
	}
	return nil
}
