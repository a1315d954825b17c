package llm

import (
	"context"
	"fmt"
	"time"
)

// idleError is the cause of a call's cancellation when it made no progress
// for too long.
type idleError struct{ d time.Duration }

func (e *idleError) Error() string {
	return fmt.Sprintf("no answer from the model for %s", e.d)
}

// idleTimer cancels a context once d passes without touch.
type idleTimer struct {
	d      time.Duration
	t      *time.Timer
	cancel context.CancelCauseFunc
}

// withIdleTimeout derives a context that is cancelled, with an *idleError
// as its cause, when d passes without a call to touch. d <= 0: never.
func withIdleTimeout(ctx context.Context, d time.Duration) (context.Context, *idleTimer) {
	ctx, cancel := context.WithCancelCause(ctx)
	it := &idleTimer{d: d, cancel: cancel}
	if d > 0 {
		it.t = time.AfterFunc(d, func() { cancel(&idleError{d: d}) })
	}
	return ctx, it
}

// touch records progress: the idle period starts again.
func (it *idleTimer) touch() {
	if it.t != nil {
		it.t.Reset(it.d)
	}
}

// stop releases the timer and the context.
func (it *idleTimer) stop() {
	if it.t != nil {
		it.t.Stop()
	}
	it.cancel(nil)
}
