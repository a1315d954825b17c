package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
)

// How the gateway gives up on an update it cannot take.
const (
	// setAsideAfter is how many takes of one update that panicked set it
	// aside: taking it again would hold up its chat (on Telegram, whose
	// acknowledgment is cumulative, every chat) for ever.
	setAsideAfter = 5
	// maxTracked bounds the updates whose panicked takes are counted.
	maxTracked = 1000
	// answerWithin bounds the check that the store and Temporal answer.
	answerWithin = 5 * time.Second
)

// ErrPanicked means taking an update, polling a platform or acknowledging
// an update panicked: a
// fault of the gateway or of a platform's adapter, caught so that it costs
// the update, not the process and every door it serves. Its stack goes to
// the log.
var ErrPanicked = errors.New("gateway: panicked")

// setAsideNotice is what the sender of an update set aside is told.
const setAsideNotice = "⚠️ This message could not be taken: taking it failed %d times with a fault of the gateway, so it was set aside. The operator's log says why (update %s)."

// takeGuarded takes u (Gateway.take), a panic in the take becoming an
// error (guard). An update whose take panicked setAsideAfter times, the
// store and Temporal answering, is set aside (setAsideDue): logged, its
// sender told, and counted as taken, so that it no longer holds up the
// updates after it. Any other failure (the store, Temporal or the
// platform not answering, a deadline) may pass: the update is taken again
// however often it comes, as before.
func (g *Gateway) takeGuarded(ctx context.Context, p Platform, u Update) error {
	err := guard(g.logger, "take an update", func() error { return g.take(ctx, p, u) },
		"platform", p.Name(), "update", u.ID)
	key := updateWorkflowID(p, u)
	switch {
	case err == nil:
		g.tries.forget(key)
		return nil
	case ctx.Err() != nil || !errors.Is(err, ErrPanicked):
		return err
	}
	if !setAsideDue(g.tries.failed(key), func() error { return g.answering(ctx) }) {
		return err
	}
	if serr := g.setAside(ctx, p, u, err); serr != nil {
		return fmt.Errorf("%w (not set aside: %w)", err, serr)
	}
	g.tries.forget(key)
	return nil
}

// setAsideDue says whether an update whose take panicked panics times is
// set aside: at setAsideAfter, when the store and Temporal answer (a
// panic while either does not may be theirs). answering is asked only
// then.
func setAsideDue(panics int, answering func() error) bool {
	return panics >= setAsideAfter && answering() == nil
}

// setAside gives up on an update whose take keeps panicking: it records
// the update as taken (a delivery of it again finds it so, and is
// acknowledged at once, its sender not told twice), logs why at error
// level, and tells its sender. Telling may fail, or panic as the take did:
// the update is set aside either way.
func (g *Gateway) setAside(ctx context.Context, p Platform, u Update, why error) error {
	if _, err := g.rt.Store.ClaimTool(ctx, doneKey(p, u)); err != nil {
		return err
	}
	g.logger.Error("gateway: an update set aside: its take panicked every time while the store and Temporal answered",
		"platform", p.Name(), "update", u.ID, "chat", u.Chat.ID, "user", u.User, "takes", setAsideAfter, "error", why)
	err := guard(g.logger, "tell the sender an update was set aside", func() error {
		parts := p.Parts(fmt.Sprintf(setAsideNotice, setAsideAfter, u.ID))
		if len(parts) == 0 {
			return nil
		}
		_, err := p.SendPart(ctx, Outgoing{ChatID: u.Chat.ID, ReplyTo: u.MessageID}, parts[0])
		return err
	}, "platform", p.Name(), "update", u.ID)
	if err != nil {
		g.logger.Warn("gateway: tell the sender an update was set aside", "platform", p.Name(), "update", u.ID, "error", err)
	}
	return nil
}

// answering says why the store or Temporal does not answer, or nil when
// both do.
func (g *Gateway) answering(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, answerWithin)
	defer cancel()
	if err := g.rt.Store.Check(ctx); err != nil {
		return fmt.Errorf("the store: %w", err)
	}
	if _, err := g.rt.Client.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		return fmt.Errorf("temporal: %w", err)
	}
	return nil
}

// guard runs f, a panic in it becoming an error wrapping ErrPanicked; the
// panic's stack is logged with what, at error level.
func guard(log *slog.Logger, what string, f func() error, attrs ...any) (err error) {
	defer func() {
		if v := recover(); v != nil {
			log.Error("gateway: "+what+" panicked", append(attrs, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))...)
			err = fmt.Errorf("%w: %s: %v", ErrPanicked, what, v)
		}
	}()
	return f()
}

// tries counts the takes that panicked of the updates whose take panicked
// lately, at most maxTracked of them (the oldest forgotten first). Safe for
// concurrent use; the zero tries is ready.
type tries struct {
	mu    sync.Mutex
	count map[string]int
	order []string
}

// failed counts a take of key that panicked and returns how many there
// were.
func (t *tries) failed(key string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.count == nil {
		t.count = map[string]int{}
	}
	if _, ok := t.count[key]; !ok {
		t.order = append(t.order, key)
		if len(t.order) > maxTracked {
			delete(t.count, t.order[0])
			t.order = t.order[1:]
		}
	}
	t.count[key]++
	return t.count[key]
}

// forget drops key's count.
func (t *tries) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.count[key]; !ok {
		return
	}
	delete(t.count, key)
	for i, k := range t.order {
		if k == key {
			t.order = append(t.order[:i], t.order[i+1:]...)
			break
		}
	}
}
