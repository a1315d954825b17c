package telemetry

import (
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
)

// errorEvery is how often the same kind of export failure is logged: a
// collector that is down fails every batch.
const errorEvery = time.Minute

// quietErrors is OpenTelemetry's error handler for the process: its
// export failures go to the process log, the first at once and then at
// most one a minute, with how many were left out.
type quietErrors struct {
	logger *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	last    time.Time
	dropped int
}

// Handle logs err unless one was logged within errorEvery.
func (q *quietErrors) Handle(err error) {
	q.mu.Lock()
	now := q.now()
	if !q.last.IsZero() && now.Sub(q.last) < errorEvery {
		q.dropped++
		q.mu.Unlock()
		return
	}
	dropped := q.dropped
	q.last, q.dropped = now, 0
	q.mu.Unlock()
	q.logger.Warn("telemetry export failed", "error", err, "similar_errors_not_shown", dropped)
}

var installErrors sync.Once

// installErrorHandler routes OpenTelemetry's errors (exporters that cannot
// reach their collector, instruments in conflict) to logger instead of
// standard error, once per process.
func installErrorHandler(logger *slog.Logger) {
	installErrors.Do(func() {
		otel.SetErrorHandler(&quietErrors{logger: logger, now: time.Now})
	})
}
