package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/models"
)

// StoreRejectedType is the type of the application error an activity fails
// with when the database refused what it wrote (models.ErrRejected).
const StoreRejectedType = "store_rejected"

// StoreGoneType is the type of the application error an activity fails
// with when the store's SQLite file was removed or replaced under the
// running process (models.ErrStoreGone).
const StoreGoneType = "store_gone"

// SessionMissingType is the type of the application error an activity
// fails with when the turn's session is not in the store (ErrSessionMissing).
const SessionMissingType = "session_missing"

// ErrSessionMissing reports that a turn's session is not in the store: it
// was deleted, or the store was replaced, while the turn ran. A retry
// cannot bring it back, and going on would answer from an empty
// conversation.
var ErrSessionMissing = errors.New("the turn's session is not in the store")

// RejectionInterceptor makes every activity, local ones included, fail
// without retrying when the database refused its content (the same write
// cannot succeed on a retry) or when the store's SQLite file was removed
// or replaced (no write can succeed until the process is restarted on a
// store). Other store errors, an unreachable database among them, keep
// their retry policy. Register it with the worker
// (worker.Options.Interceptors).
func RejectionInterceptor() interceptor.WorkerInterceptor { return &rejectionWorker{} }

type rejectionWorker struct {
	interceptor.WorkerInterceptorBase
}

func (rejectionWorker) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &rejectionActivity{}
	i.Next = next
	return i
}

type rejectionActivity struct {
	interceptor.ActivityInboundInterceptorBase
}

func (a *rejectionActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	out, err := a.Next.ExecuteActivity(ctx, in)
	return out, NonRetryableRejection(err)
}

// NonRetryableRejection turns an error wrapping models.ErrRejected,
// models.ErrStoreGone or ErrSessionMissing into a non-retryable application
// error (of type StoreRejectedType, StoreGoneType or SessionMissingType)
// saying so in one line, err's text
// included (a StoreGoneType error does not wrap err); other errors are
// returned as they are.
func NonRetryableRejection(err error) error {
	if err == nil {
		return nil
	}
	var msg, typ string
	switch {
	case errors.Is(err, models.ErrStoreGone):
		msg, typ = " (restart this process on a store)", StoreGoneType
	case errors.Is(err, models.ErrRejected):
		msg, typ = "the database refused to store this turn's content: ", StoreRejectedType
	case errors.Is(err, ErrSessionMissing):
		msg, typ = "", SessionMissingType
	default:
		return err
	}
	// Temporal reads retryability from the returned error itself, not
	// from one it wraps.
	if app, ok := err.(*temporal.ApplicationError); ok && app.NonRetryable() {
		return err
	}
	if typ == StoreGoneType {
		// err says what is gone; its chain as a cause would only repeat
		// it, level by level, wherever the failure is shown.
		return temporal.NewApplicationErrorWithOptions(err.Error()+msg, typ, temporal.ApplicationErrorOptions{NonRetryable: true})
	}
	return temporal.NewNonRetryableApplicationError(msg+err.Error(), typ, err)
}
