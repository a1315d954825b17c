package engine

import (
	"context"
	"errors"
	"log/slog"
	"math"

	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/logfile"
)

// sdkRoutine are the messages the Temporal SDK logs as errors or warnings
// that are routine for Talaria: one attempt of an activity failed (a model
// call refused, a worker stopping cancels what it runs) or a heartbeat did
// not reach the server. Temporal retries the attempt, the turn's wait
// events show the retry to the user and its result carries a failure that
// ends it, so as log lines they only repeat what is shown. Panics, workflow
// task failures and everything else stay as the SDK logs them.
var sdkRoutine = map[string]bool{
	"Activity error.":                    true,
	"RecordActivityHeartbeat with error": true,
}

// lowerHandler is a log handler for the Temporal SDK's records: it drops
// records below min and lowers to level to those routine says are
// routine, shown only when the handler underneath shows that level.
type lowerHandler struct {
	slog.Handler
	min, to slog.Level
	routine func(slog.Record) bool
}

func (h lowerHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h lowerHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level > h.to && h.routine(r) {
		r.Level = h.to
		if !h.Handler.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h lowerHandler) WithAttrs(a []slog.Attr) slog.Handler {
	h.Handler = h.Handler.WithAttrs(a)
	return h
}

func (h lowerHandler) WithGroup(n string) slog.Handler {
	h.Handler = h.Handler.WithGroup(n)
	return h
}

// quiet is the logger given to the Temporal SDK. A logger made by
// logfile.Open routes every SDK record to the log file only (and to the
// terminal too at debug level), as the SDK logs it, except that routine
// stops are info lines (routineStop). Any other logger keeps the SDK's
// info logs and its routine per-attempt errors out of the terminal (the
// latter show with debug logging).
func quiet(l *slog.Logger) *slog.Logger {
	if h, ok := logfile.ForTemporal(l); ok {
		// Routine stops are info lines; every record is kept.
		return slog.New(lowerHandler{h, math.MinInt, slog.LevelInfo, routineStop})
	}
	// The SDK's info logs are dropped, its routine errors lowered to debug.
	return slog.New(lowerHandler{l.Handler(), slog.LevelWarn, slog.LevelDebug, func(r slog.Record) bool { return sdkRoutine[r.Message] }})
}

// sdkErrorKey is the key of the error the SDK attaches to its records.
const sdkErrorKey = "Error"

// routineStop says whether r is the SDK's record of an activity attempt
// (its error, or a heartbeat's answer) that ended because it was
// cancelled: its error is a cancellation (context.Canceled, or Temporal's
// CanceledError). The error's type decides, never its text. Pure.
func routineStop(r slog.Record) bool {
	if !sdkRoutine[r.Message] {
		return false
	}
	stop := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != sdkErrorKey {
			return true
		}
		err, ok := a.Value.Resolve().Any().(error)
		stop = ok && (errors.Is(err, context.Canceled) || temporal.IsCanceledError(err))
		return false
	})
	return stop
}
