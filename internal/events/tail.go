package events

import (
	"context"
	"log/slog"
	"time"

	"github.com/talaria-agent/talaria/models"
)

// DefaultTailInterval is how often Tail polls when its interval is not
// positive.
const DefaultTailInterval = 100 * time.Millisecond

// tailPage is how many events Tail asks for at once; a full page is
// followed by the next one without waiting.
const tailPage = models.DefaultEventsLimit

// maxTailBackoff caps the wait between failed polls.
const maxTailBackoff = 5 * time.Second

// Source reads a turn's events after an ID; *models.Store is one.
type Source interface {
	EventsAfter(ctx context.Context, turnID string, afterID int64, limit int) ([]models.Event, error)
}

// Watcher is a Source that says when a turn's events are stored
// (models.Store.WatchEvents): Tail then reads on each wake instead of
// polling.
type Watcher interface {
	WatchEvents(turnID string) (wake <-chan struct{}, stop func())
}

// watchedPoll is how often Tail reads a watched turn with no wake at all:
// a bound on how late an event can be, should a wake ever be missed.
const watchedPoll = 5 * time.Second

// Tail follows the events of turnID whose ID is greater than afterID,
// reading src when it says events came (a Watcher), else polling it every
// interval (DefaultTailInterval when not positive). The
// channel delivers them in order and is closed after the first event of
// kind "done", or when ctx ends. Errors of src are logged and the poll is
// retried with a growing delay; they do not end the tail.
func Tail(ctx context.Context, src Source, turnID string, afterID int64, interval time.Duration) <-chan models.Event {
	if interval <= 0 {
		interval = DefaultTailInterval
	}
	out := make(chan models.Event)
	go func() {
		defer close(out)
		if src == nil {
			slog.Error("events: tail without a source", "turn", turnID)
			return
		}
		var wake <-chan struct{}
		idle := interval // the wait after a read that found all there was
		if w, ok := src.(Watcher); ok {
			var stop func()
			wake, stop = w.WatchEvents(turnID)
			defer stop()
			idle = watchedPoll
		}
		failures := 0
		for {
			evs, err := src.EventsAfter(ctx, turnID, afterID, tailPage)
			if ctx.Err() != nil {
				return
			}
			wait := idle
			if err != nil {
				failures++
				level := slog.LevelDebug
				if failures == 1 {
					level = slog.LevelWarn
				}
				slog.Log(ctx, level, "events: tail poll failed, retrying", "turn", turnID, "after", afterID, "failures", failures, "error", err)
				wait = backoff(interval, failures)
			} else {
				failures = 0
				for _, ev := range evs {
					select {
					case out <- ev:
					case <-ctx.Done():
						return
					}
					afterID = ev.ID
					if ev.Kind == KindDone {
						return
					}
				}
				if len(evs) >= tailPage {
					continue
				}
			}
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-wake:
				timer.Stop()
			case <-timer.C:
			}
		}
	}()
	return out
}

// backoff doubles interval per consecutive failure, up to maxTailBackoff
// (or interval, when that is longer).
func backoff(interval time.Duration, failures int) time.Duration {
	wait := interval
	for i := 1; i < failures && wait < maxTailBackoff; i++ {
		wait *= 2
	}
	return max(interval, min(wait, maxTailBackoff))
}
