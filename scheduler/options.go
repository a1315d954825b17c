package scheduler

import (
	"context"
	"log/slog"
	"time"
)

// DefaultMaxMissed is how many slots outside a job's catch-up window one
// Tick records "missed" at most; older ones are passed over unrecorded.
const DefaultMaxMissed = 1000

// DefaultStartGrace is how long after a run was recorded "started" a Tick
// takes its unconfirmed start for failed and starts it again.
const DefaultStartGrace = 30 * time.Second

// DefaultTickSpec fires a Ticker at second 0 of every minute.
const DefaultTickSpec = "0 * * * * *"

// config holds the settings of Tick and Ticker.
type config struct {
	clock     func() time.Time
	logger    *slog.Logger
	maxMissed int
	grace     time.Duration
	spec      string
	onTick    func(Result, error)
	paused    func() bool
	beat      func(ctx context.Context, at time.Time) error
	// housekeeping runs after each tick (WithHousekeeping).
	housekeeping func(ctx context.Context, now time.Time) error
}

// DefaultConcurrency is how many jobs one Tick handles at once.
const DefaultConcurrency = 16

// Option configures Tick and Ticker.
type Option func(*config)

// WithClock sets the clock (time.Now when nil). A Ticker ticks the minute
// it reads from it; Tick stamps the StartedAt of the runs it starts.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.clock = now
		}
	}
}

// WithLogger sets the logger of a Ticker (slog.Default() when nil).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithMaxMissed sets how many slots outside a job's catch-up window one
// Tick records "missed" at most (DefaultMaxMissed when n is not positive).
func WithMaxMissed(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxMissed = n
		}
	}
}

// WithStartGrace sets how long after a run was recorded "started" a Tick
// takes its unconfirmed start for failed (DefaultStartGrace when d is not
// positive). It must exceed the time a Starter takes.
func WithStartGrace(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.grace = d
		}
	}
}

// WithTickSpec sets when a Ticker fires, as a cron expression with a
// leading seconds field (DefaultTickSpec when empty). Whenever it fires, it
// ticks the current minute; tests fire it every second.
func WithTickSpec(spec string) Option {
	return func(c *config) {
		if spec != "" {
			c.spec = spec
		}
	}
}

// WithOnTick sets a function a Ticker calls after each tick with its
// outcome.
func WithOnTick(fn func(Result, error)) Option {
	return func(c *config) { c.onTick = fn }
}

// WithPaused sets a function a Ticker asks before each tick: while it
// returns true the tick is skipped (its slots are caught up by the first
// tick after, within their catch-up windows).
func WithPaused(fn func() bool) Option {
	return func(c *config) { c.paused = fn }
}

// WithHeartbeat sets a function a Ticker calls when it starts and at each
// tick it does not skip, with the time: it tells others (see
// models.Store.RecordSchedulerBeat) that a scheduler is running. Its
// errors are only logged.
func WithHeartbeat(fn func(ctx context.Context, at time.Time) error) Option {
	return func(c *config) { c.beat = fn }
}

// WithHousekeeping sets a function a Ticker calls after each tick it does
// not skip, with the time: store chores such as pruning old live events.
// Its errors are only logged.
func WithHousekeeping(fn func(ctx context.Context, now time.Time) error) Option {
	return func(c *config) { c.housekeeping = fn }
}

func newConfig(opts []Option) config {
	c := config{
		clock:     time.Now,
		logger:    slog.Default(),
		maxMissed: DefaultMaxMissed,
		grace:     DefaultStartGrace,
		spec:      DefaultTickSpec,
	}
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	return c
}
