package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// ErrTickerStarted reports a second Start of a Ticker.
var ErrTickerStarted = errors.New("ticker already started")

// tickBacklog is how many ticks may wait behind one that is still going;
// a tick due beyond it is dropped with a warning, and its slots are handled
// by the next tick as a catch-up.
const tickBacklog = 64

// tickRequest is one tick to do: the time it was due (read from the clock
// when it came due), and whether it is the tick of the start.
type tickRequest struct {
	at    time.Time
	start bool
}

// Ticker ticks once when it starts and then at second 0 of every minute (in
// UTC), with the minute read from its clock when the tick comes due. Ticks
// run one at a time, in the order they came due: a tick due while the one
// before is still going waits for it and then ticks its own minute, so a
// slow tick delays the next one but never turns its slot into a catch-up.
//
// The tick at start is what makes a short restart lose nothing: the slot of
// the minute the scheduler starts in runs at once, and only the slots due
// while no scheduler was ticking are left to the job's catch-up policy.
type Ticker struct {
	st      Store
	starter Starter
	running Running
	cfg     config
	opts    []Option

	mu     sync.Mutex
	cron   *cron.Cron
	cancel context.CancelFunc
	queue  chan tickRequest
	stop   chan struct{} // closed by Stop: take no further tick
	done   chan struct{} // closed when the ticking loop has ended
}

// NewTicker returns a Ticker over st; it ticks once started.
func NewTicker(st Store, starter Starter, running Running, opts ...Option) *Ticker {
	return &Ticker{st: st, starter: starter, running: running, cfg: newConfig(opts), opts: opts}
}

// Start starts ticking: a first tick at once, then the ticks of the tick
// spec. The ticks' store and Temporal calls use a context derived from ctx.
// A Ticker starts once: a second Start yields ErrTickerStarted, a malformed
// WithTickSpec an error.
func (t *Ticker) Start(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cron != nil {
		return fmt.Errorf("scheduler: start: %w", ErrTickerStarted)
	}
	logger := cronLogger{t.cfg.logger}
	c := cron.New(
		cron.WithLocation(time.UTC),
		cron.WithSeconds(),
		cron.WithLogger(logger),
		cron.WithChain(cron.Recover(logger)),
	)
	if _, err := c.AddFunc(t.cfg.spec, t.due); err != nil {
		return fmt.Errorf("scheduler: start: tick spec %q: %w", t.cfg.spec, err)
	}
	var tctx context.Context
	tctx, t.cancel = context.WithCancel(ctx)
	t.queue = make(chan tickRequest, tickBacklog+1)
	t.stop, t.done = make(chan struct{}), make(chan struct{})
	t.queue <- tickRequest{at: t.cfg.clock(), start: true} // before any of the spec's
	t.cron = c
	go t.loop(tctx)
	c.Start()
	return nil
}

// Stop stops ticking and waits for a tick in progress to end, so nothing
// uses the store after it; ticks still waiting are dropped. When ctx ends
// first, the tick is cancelled, and Stop returns ctx's error once it ended.
// Stopping a Ticker that is not started does nothing.
func (t *Ticker) Stop(ctx context.Context) error {
	t.mu.Lock()
	c, cancel, stop, done := t.cron, t.cancel, t.stop, t.done
	t.mu.Unlock()
	if c == nil {
		return nil
	}
	<-c.Stop().Done() // no tick comes due after this
	t.mu.Lock()
	select {
	case <-stop:
	default:
		close(stop)
	}
	t.mu.Unlock()
	select {
	case <-done:
		cancel()
		return nil
	case <-ctx.Done():
		cancel()
		<-done
		return fmt.Errorf("scheduler: stop: %w", ctx.Err())
	}
}

// TickNow ticks the current minute of the Ticker's clock at once.
func (t *Ticker) TickNow(ctx context.Context) (Result, error) {
	return Tick(ctx, t.st, t.starter, t.running, t.cfg.clock(), t.opts...)
}

// due is the cron job: it queues the tick of the time it came due.
func (t *Ticker) due() {
	req := tickRequest{at: t.cfg.clock()}
	select {
	case t.queue <- req:
	default:
		t.cfg.logger.Warn("cron tick dropped: earlier ticks are still going; the next tick catches up on its slots",
			"minute", minuteOf(req.at), "waiting", tickBacklog)
	}
}

// loop runs the queued ticks one at a time until Stop or ctx ends.
func (t *Ticker) loop(ctx context.Context) {
	defer close(t.done)
	for {
		select {
		case <-t.stop:
			return
		case <-ctx.Done():
			return
		case req := <-t.queue:
			select {
			case <-t.stop: // Stop won the race: no new tick
				return
			default:
			}
			t.safeTick(ctx, req)
		}
	}
}

// safeTick runs one tick; a panic in it is logged, and ticking goes on.
func (t *Ticker) safeTick(ctx context.Context, req tickRequest) {
	defer func() {
		if r := recover(); r != nil {
			t.cfg.logger.Error("cron tick panicked", "minute", minuteOf(req.at), "panic", fmt.Sprint(r))
		}
	}()
	t.tick(ctx, req)
}

// tick ticks the minute of req.at. The tick at start beats even while work
// is paused: it tells others that a scheduler runs.
func (t *Ticker) tick(ctx context.Context, req tickRequest) {
	if req.start {
		t.heartbeat(ctx)
	}
	if t.cfg.paused != nil && t.cfg.paused() {
		t.cfg.logger.Debug("cron tick skipped: work is paused")
		return
	}
	if !req.start {
		t.heartbeat(ctx)
	}
	res, err := Tick(ctx, t.st, t.starter, t.running, req.at, t.opts...)
	minute := minuteOf(req.at)
	if err != nil {
		t.cfg.logger.Error("cron tick failed", "minute", minute, "error", err)
	}
	for _, jerr := range res.Errors {
		t.cfg.logger.Error("cron job failed", "minute", minute, "error", jerr)
	}
	if n := len(res.Started) + len(res.Skipped) + len(res.Missed); n > 0 {
		t.cfg.logger.Info("cron tick", "minute", minute, "at_start", req.start,
			"started", len(res.Started), "skipped", len(res.Skipped), "missed", len(res.Missed))
	}
	if t.cfg.housekeeping != nil {
		if herr := t.cfg.housekeeping(ctx, req.at); herr != nil && ctx.Err() == nil {
			t.cfg.logger.Warn("scheduler housekeeping failed", "minute", minute, "error", herr)
		}
	}
	if t.cfg.onTick != nil {
		t.cfg.onTick(res, err)
	}
}

// minuteOf is the minute of at, in UTC RFC 3339. Pure.
func minuteOf(at time.Time) string { return at.UTC().Truncate(time.Minute).Format(time.RFC3339) }

// heartbeatTimeout bounds one heartbeat, so that a store that does not
// answer delays a tick by no more.
const heartbeatTimeout = 5 * time.Second

// heartbeat says, through WithHeartbeat's function, that this scheduler runs.
func (t *Ticker) heartbeat(ctx context.Context) {
	if t.cfg.beat == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, heartbeatTimeout)
	defer cancel()
	if err := t.cfg.beat(ctx, t.cfg.clock()); err != nil && ctx.Err() == nil {
		t.cfg.logger.Debug("scheduler heartbeat not recorded", "error", err)
	}
}

// cronLogger passes the cron library's messages to slog; its routine
// messages are debug messages.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, keysAndValues ...any) {
	c.l.Debug("cron: "+msg, keysAndValues...)
}

func (c cronLogger) Error(err error, msg string, keysAndValues ...any) {
	c.l.Error("cron: "+msg, append(keysAndValues, "error", err)...)
}
