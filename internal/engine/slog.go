package engine

import (
	"context"
	"errors"
	"log/slog"

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

// sdkHandler is the log handler given to the Temporal SDK: it drops
// records below min (the SDK's chatty info logs) and lowers its routine
// errors (sdkRoutine) to debug, shown only when the handler underneath
// shows debug records.
type sdkHandler struct {
	slog.Handler
	min slog.Level
}

func (h sdkHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h sdkHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level > slog.LevelDebug && sdkRoutine[r.Message] {
		r.Level = slog.LevelDebug
		if !h.Handler.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h sdkHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return sdkHandler{h.Handler.WithAttrs(a), h.min}
}

func (h sdkHandler) WithGroup(n string) slog.Handler {
	return sdkHandler{h.Handler.WithGroup(n), h.min}
}

// quiet is the logger given to the Temporal SDK. A logger made by
// logfile.Open routes every SDK record to the log file only (and to the
// terminal too at debug level), as the SDK logs it, except that routine
// stops are info lines (stopsHandler). Any other logger keeps the SDK's
// info logs and its routine per-attempt errors out of the terminal (the
// latter show with debug logging).
func quiet(l *slog.Logger) *slog.Logger {
	if h, ok := logfile.ForTemporal(l); ok {
		return slog.New(stopsHandler{h})
	}
	return slog.New(sdkHandler{l.Handler(), slog.LevelWarn})
}

// stopsHandler lowers to info the SDK's records of routine stops
// (routineStop): an activity cancelled because its turn was interrupted,
// its workflow ended or its worker stopped is what a stop does, not an
// error. The turn's own "turn ended" line says why it stopped.
type stopsHandler struct{ slog.Handler }

func (h stopsHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level > slog.LevelInfo && routineStop(r) {
		r.Level = slog.LevelInfo
		if !h.Handler.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h stopsHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return stopsHandler{h.Handler.WithAttrs(a)}
}

func (h stopsHandler) WithGroup(n string) slog.Handler {
	return stopsHandler{h.Handler.WithGroup(n)}
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
