package engine

import (
	"context"
	"log/slog"

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
// terminal too at debug level), as the SDK logs it. Any other logger keeps
// the SDK's info logs and its routine per-attempt errors out of the
// terminal (the latter show with debug logging).
func quiet(l *slog.Logger) *slog.Logger {
	if h, ok := logfile.ForTemporal(l); ok {
		return slog.New(h)
	}
	return slog.New(sdkHandler{l.Handler(), slog.LevelWarn})
}
