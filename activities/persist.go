package activities

import (
	"context"
	"errors"
	"time"

	"github.com/talaria-agent/talaria/models"
)

// maxPersistWait bounds how long a tool batch waits for a store that does
// not answer before giving up on storing its results: a batch that ends
// during a database outage keeps what it did when the outage is shorter.
const maxPersistWait = 5 * time.Minute

// persistAttemptTimeout bounds one attempt to store a batch's results.
const persistAttemptTimeout = 30 * time.Second

// storeContext bounds one write of what an attempt already has (an
// answer, results) by persistAttemptTimeout, whatever became of the
// attempt: a stop or a lost attempt does not unmake what was done.
func storeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), persistAttemptTimeout)
}

// persistResults stores a batch's results, even when the batch was
// interrupted. A store that does not answer is tried again, with backoff
// and heartbeats, for up to maxPersistWait; content the database refuses,
// a store that is gone, or a malformed row fails at once.
func (a *Activities) persistResults(ctx context.Context, call int, rows []models.Message) ([]models.Message, error) {
	base := context.WithoutCancel(ctx)
	// The results are stored even when the attempt is asked to stop: the
	// heartbeats keep it alive, and its work is not theirs to end.
	_, stop := a.heartbeat(base, func() any { return call })
	defer stop()
	deadline := time.Now().Add(maxPersistWait)
	delay := 200 * time.Millisecond
	for {
		attemptCtx, cancel := context.WithTimeout(base, persistAttemptTimeout)
		saved, err := a.Store.AppendMessages(attemptCtx, rows)
		cancel()
		if err == nil || !storeMayAnswerLater(err) || time.Now().Add(delay).After(deadline) {
			return saved, err
		}
		a.logger().Warn("tool results not stored yet: the store does not answer; trying again", "call", call, "in", delay, "error", err)
		time.Sleep(delay)
		delay = min(delay*2, 5*time.Second)
	}
}

// storeMayAnswerLater reports whether a failed write may succeed when
// simply tried again: not for content the database refuses, a store file
// that is gone, or a malformed row. Pure.
func storeMayAnswerLater(err error) bool {
	return !errors.Is(err, models.ErrRejected) && !errors.Is(err, models.ErrStoreGone) &&
		!errors.Is(err, models.ErrInvalidArgument) && !errors.Is(err, context.Canceled)
}
