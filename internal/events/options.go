package events

import (
	"log/slog"
	"time"
)

// Defaults of the Publisher options.
const (
	DefaultFlushEvery = 50 * time.Millisecond
	DefaultMaxBatch   = 128
	DefaultBufferSize = 1024
)

// config holds a Publisher's settings.
type config struct {
	flushEvery time.Duration
	maxBatch   int
	bufferSize int
	logger     *slog.Logger
	clock      func() time.Time
	// call and attempt mark every event (WithAttempt).
	call, attempt int
}

// Option configures a Publisher.
type Option func(*config)

// WithFlushEvery sets how long a published event may wait before it is
// written (DefaultFlushEvery when d is not positive).
func WithFlushEvery(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.flushEvery = d
		}
	}
}

// WithMaxBatch sets how many events one write carries at most; reaching it
// starts a write at once (DefaultMaxBatch when n is not positive).
func WithMaxBatch(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxBatch = n
		}
	}
}

// WithBufferSize sets how many events may wait to be written before
// streamed text is merged into the last waiting event (DefaultBufferSize
// when n is not positive).
func WithBufferSize(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.bufferSize = n
		}
	}
}

// WithLogger sets the logger of write errors (slog.Default() when nil).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithClock sets the clock that stamps events (time.Now when nil).
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.clock = now
		}
	}
}

func newConfig(opts []Option) config {
	c := config{
		flushEvery: DefaultFlushEvery,
		maxBatch:   DefaultMaxBatch,
		bufferSize: DefaultBufferSize,
		logger:     slog.Default(),
		clock:      time.Now,
	}
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	return c
}

// WithAttempt marks every event as published by attempt (counting from 1)
// of the turn's model call number call, and makes the Publisher begin with
// a KindAttempt event: a door replaces the call's text shown so far with
// what follows. Once a later attempt began, the store refuses this one's
// events and the Publisher discards the rest (Superseded).
func WithAttempt(call, attempt int) Option {
	return func(c *config) { c.call, c.attempt = call, max(attempt, 1) }
}
