package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/models"
)

// StoreCheckEvery is how often a serving process checks its store.
const StoreCheckEvery = time.Second

// storeCheckTimeout bounds one check: a database that takes longer to
// answer is unreachable.
const storeCheckTimeout = 5 * time.Second

// storeHealth is what the checks of the store found.
type storeHealth int

const (
	storeOK storeHealth = iota
	storeUnreachable
	storeGone
)

// storeMissesToPause is how many checks in a row (one a second in serve)
// must find the store not answering before serve stops taking new work: a
// blip or a slow check does not pause.
const storeMissesToPause = 3

// storeWatch is the watcher's state: the health it acts on and how many
// checks in a row failed.
type storeWatch struct {
	health storeHealth
	misses int
}

// next is the state a check result leads to, and what to say about the
// change ("" when there is nothing new to say). Pure.
func (w storeWatch) next(err error) (storeWatch, string) {
	switch {
	case err == nil && w.health == storeUnreachable:
		return storeWatch{health: storeOK}, "the store answers again: serve takes work again"
	case err == nil:
		return storeWatch{health: w.health}, ""
	case errors.Is(err, models.ErrStoreGone):
		return storeWatch{health: storeGone}, err.Error()
	}
	w.misses++
	if w.health != storeOK || w.misses < storeMissesToPause {
		return w, ""
	}
	w.health = storeUnreachable
	return w, "the store does not answer: serve stops taking work until it does (" + unreachableDetail(err) + ")"
}

// unreachableDetail is what err says beyond "the store does not answer",
// on one short line.
func unreachableDetail(err error) string {
	s := strings.TrimPrefix(err.Error(), models.ErrUnreachable.Error()+": ")
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
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
// that stops answering (a database server down) for storeMissesToPause
// checks in a row pauses work (PauseWork: no new activity starts, running
// ones go on, the scheduler skips its ticks) and is said once; when it
// answers again work resumes (ResumeWork) and that is said too. Turns wait
// meanwhile instead of spending their retries on the store. say receives
// each line to show (nil: the runtime's logger).
func (rt *Runtime) WatchStore(ctx context.Context, interval time.Duration, say func(line string)) error {
	if interval <= 0 {
		interval = StoreCheckEvery
	}
	if say == nil {
		say = func(line string) { rt.logger.Warn(line) }
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var watch storeWatch
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
		prev := watch.health
		var msg string
		watch, msg = watch.next(err)
		switch {
		case watch.health == storeGone:
			name := cmp.Or(rt.Store.File(), "database")
			return &StoreGoneError{Store: name, Err: err}
		case watch.health == storeUnreachable && prev == storeOK:
			rt.PauseWork()
			say(msg)
		case watch.health == storeOK && prev == storeUnreachable:
			rt.ResumeWork()
			say(msg)
		}
	}
}
