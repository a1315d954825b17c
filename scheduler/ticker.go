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

// Ticker runs Tick at second 0 of every minute (in UTC), with the minute
// read from its clock. A tick that is still going when the next one is due
// makes that one skip; the next tick catches up on its slots.
type Ticker struct {
	st      Store
	starter Starter
	running Running
	cfg     config
	opts    []Option

	mu     sync.Mutex
	beats  sync.WaitGroup // the first heartbeat, which Stop waits for
	cron   *cron.Cron
	cancel context.CancelFunc
	ctx    context.Context
}

// NewTicker returns a Ticker over st; it ticks once started.
func NewTicker(st Store, starter Starter, running Running, opts ...Option) *Ticker {
	return &Ticker{st: st, starter: starter, running: running, cfg: newConfig(opts), opts: opts}
}

// Start starts ticking. The ticks' store and Temporal calls use a context
// derived from ctx. A Ticker starts once: a second Start yields
// ErrTickerStarted, a malformed WithTickSpec an error.
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
		cron.WithChain(cron.Recover(logger), cron.SkipIfStillRunning(logger)),
	)
	if _, err := c.AddFunc(t.cfg.spec, t.tick); err != nil {
		return fmt.Errorf("scheduler: start: tick spec %q: %w", t.cfg.spec, err)
	}
	t.ctx, t.cancel = context.WithCancel(ctx)
	t.cron = c
	c.Start()
	t.beats.Add(1)
	go func(ctx context.Context) { // at once: the first tick may be a minute away
		defer t.beats.Done()
		t.heartbeat(ctx)
	}(t.ctx)
	return nil
}

// Stop stops ticking and waits for a tick (or the first heartbeat) in
// progress to end, so nothing uses the store after it. When ctx ends
// first, the tick is cancelled, and Stop returns ctx's error once it ended.
// Stopping a Ticker that is not started does nothing.
func (t *Ticker) Stop(ctx context.Context) error {
	t.mu.Lock()
	c, cancel := t.cron, t.cancel
	t.mu.Unlock()
	if c == nil {
		return nil
	}
	done := c.Stop().Done()
	select {
	case <-done:
		cancel()
		t.beats.Wait()
		return nil
	case <-ctx.Done():
		cancel()
		<-done
		t.beats.Wait()
		return fmt.Errorf("scheduler: stop: %w", ctx.Err())
	}
}

// TickNow ticks the current minute of the Ticker's clock at once.
func (t *Ticker) TickNow(ctx context.Context) (Result, error) {
	return Tick(ctx, t.st, t.starter, t.running, t.cfg.clock(), t.opts...)
}

// tick is the cron job.
func (t *Ticker) tick() {
	if t.cfg.paused != nil && t.cfg.paused() {
		t.cfg.logger.Debug("cron tick skipped: work is paused")
		return
	}
	t.mu.Lock()
	ctx := t.ctx
	t.mu.Unlock()
	t.heartbeat(ctx)
	now := t.cfg.clock()
	res, err := Tick(ctx, t.st, t.starter, t.running, now, t.opts...)
	minute := now.UTC().Truncate(time.Minute).Format(time.RFC3339)
	if err != nil {
		t.cfg.logger.Error("cron tick failed", "minute", minute, "error", err)
	}
	for _, jerr := range res.Errors {
		t.cfg.logger.Error("cron job failed", "minute", minute, "error", jerr)
	}
	if n := len(res.Started) + len(res.Skipped) + len(res.Missed); n > 0 {
		t.cfg.logger.Info("cron tick", "minute", minute,
			"started", len(res.Started), "skipped", len(res.Skipped), "missed", len(res.Missed))
	}
	if t.cfg.housekeeping != nil {
		if herr := t.cfg.housekeeping(ctx, now); herr != nil && ctx.Err() == nil {
			t.cfg.logger.Warn("scheduler housekeeping failed", "minute", minute, "error", herr)
		}
	}
	if t.cfg.onTick != nil {
		t.cfg.onTick(res, err)
	}
}

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
