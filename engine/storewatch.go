package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/talaria-agent/talaria/models"
)

// StoreCheckEvery is how often a serving process checks its store.
const StoreCheckEvery = time.Second

// storeCheckTimeout bounds one check: a database that takes longer to
// answer is unreachable.
const storeCheckTimeout = 5 * time.Second

// storeHealth is what the last check of the store found.
type storeHealth int

const (
	storeOK storeHealth = iota
	storeUnreachable
	storeGone
)

// storeTransition is the health a check result leads to from prev, and
// what to say about the change ("" when there is nothing new to say). Pure.
func storeTransition(prev storeHealth, err error) (storeHealth, string) {
	switch {
	case err == nil && prev == storeUnreachable:
		return storeOK, "the store answers again"
	case err == nil:
		return prev, ""
	case errors.Is(err, models.ErrStoreGone):
		return storeGone, err.Error()
	case prev == storeUnreachable:
		return prev, ""
	default:
		if !errors.Is(err, models.ErrUnreachable) {
			err = fmt.Errorf("%w: %w", models.ErrUnreachable, err)
		}
		return storeUnreachable, fmt.Sprintf("%v; turns wait for it", err)
	}
}

// StoreGoneError reports that the store of a running process was removed
// or replaced; Error is the line to show.
type StoreGoneError struct {
	// Store names the store: its file, or "the database".
	Store string
	Err   error
}

func (e *StoreGoneError) Error() string {
	return fmt.Sprintf("the store %s was removed or replaced under a running serve; stopping: restart serve to continue", e.Store)
}

func (e *StoreGoneError) Unwrap() error { return e.Err }

// WatchStore checks the store every interval (StoreCheckEvery when not
// positive) until ctx ends, which returns nil, or the store is gone: its
// SQLite file removed or replaced, which returns a *StoreGoneError. A store
// that stops answering (a database server down) is logged once when it
// stops and once when it answers again; meanwhile the turns' bookkeeping
// retries until it is back.
func (rt *Runtime) WatchStore(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		interval = StoreCheckEvery
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	health := storeOK
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		checkCtx, cancel := context.WithTimeout(ctx, storeCheckTimeout)
		err := rt.Store.Check(checkCtx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		var msg string
		health, msg = storeTransition(health, err)
		switch {
		case health == storeGone:
			name := rt.Store.File()
			if name == "" {
				name = "database"
			}
			return &StoreGoneError{Store: name, Err: err}
		case msg != "" && health == storeUnreachable:
			rt.logger.Warn(msg)
		case msg != "":
			rt.logger.Info(msg)
		}
	}
}
