package embedded

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"time"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"

	"github.com/talaria-agent/talaria/internal/logfile"
)

// slogLogger implements the server's log.Logger over a slog.Handler. Tags
// become slog attributes; the record's source is the server's call site.
// Tags added by With are kept as they are and turned into attributes only
// when a record is logged: the server derives loggers per request, and most
// of its records are below the level that is logged.
type slogLogger struct {
	h    slog.Handler
	with []tag.Tag
}

var (
	_ log.Logger      = (*slogLogger)(nil)
	_ log.WithLogger  = (*slogLogger)(nil)
	_ log.SLogWrapper = (*slogLogger)(nil)
	_ slog.Handler    = (*minLevelHandler)(nil)
)

// newSlogLogger bridges the server's logs to l, dropping records below min.
func newSlogLogger(l *slog.Logger, min slog.Leveler) *slogLogger {
	return &slogLogger{h: &minLevelHandler{min: min, next: temporalHandler(l)}}
}

// temporalHandler is where the server's records (and those of the SDK
// client it uses inside) go: the log file of a logger made by
// logfile.Open, never the user's terminal; any other logger as it is.
func temporalHandler(l *slog.Logger) slog.Handler {
	if h, ok := logfile.ForTemporal(l); ok {
		return h
	}
	return l.Handler()
}

func (s *slogLogger) Debug(msg string, tags ...tag.Tag) { s.log(slog.LevelDebug, msg, tags) }
func (s *slogLogger) Info(msg string, tags ...tag.Tag)  { s.log(slog.LevelInfo, msg, tags) }
func (s *slogLogger) Warn(msg string, tags ...tag.Tag)  { s.log(slog.LevelWarn, msg, tags) }
func (s *slogLogger) Error(msg string, tags ...tag.Tag) { s.log(slog.LevelError, msg, tags) }

// DPanic logs at error level; like a production zap logger it does not panic.
func (s *slogLogger) DPanic(msg string, tags ...tag.Tag) { s.log(slog.LevelError, msg, tags) }

// Panic logs at error level and panics, as the server's contract requires.
func (s *slogLogger) Panic(msg string, tags ...tag.Tag) {
	s.log(slog.LevelError, msg, tags)
	panic(msg)
}

// Fatal logs at error level and exits the process. The server calls Fatal
// only where it cannot continue (for example a gRPC port it cannot bind) and
// relies on it not returning. Start checks the frontend address beforehand so
// that bad options surface as errors instead.
func (s *slogLogger) Fatal(msg string, tags ...tag.Tag) {
	s.log(slog.LevelError+4, msg, tags)
	fmt.Fprintf(os.Stderr, "talaria: the embedded Temporal server cannot go on: %s%s\n", msg, fatalDetail(append(s.with, tags...)))
	os.Exit(1)
}

// With returns a logger that adds tags to every record.
func (s *slogLogger) With(tags ...tag.Tag) log.Logger {
	if len(tags) == 0 {
		return s
	}
	with := make([]tag.Tag, 0, len(s.with)+len(tags))
	return &slogLogger{h: s.h, with: append(append(with, s.with...), tags...)}
}

// SLog lets server code that wants a *slog.Logger use the same handler.
func (s *slogLogger) SLog() *slog.Logger { return slog.New(s.h.WithAttrs(tagsToAttrs(s.with))) }

func (s *slogLogger) log(level slog.Level, msg string, tags []tag.Tag) {
	if level == slog.LevelError && callerWentAway(tags) {
		level = slog.LevelWarn
	}
	ctx := context.Background()
	if !s.h.Enabled(ctx, level) {
		return
	}
	var pcs [1]uintptr
	runtime.Callers(3, pcs[:]) // runtime.Callers, log, the level method
	r := slog.NewRecord(time.Now(), level, msg, pcs[0])
	r.AddAttrs(tagsToAttrs(s.with)...)
	r.AddAttrs(tagsToAttrs(tags)...)
	_ = s.h.Handle(ctx, r)
}

// callerWentAway reports whether a record's error is its request's context
// cancelled: the caller stopped waiting (a client interrupted, a process
// stopping), which the server reports as a failed operation although
// nothing failed in it. Such a record is a warning, not an error. The
// server flattens the cause into its error's text, so the text decides.
// Pure.
func callerWentAway(tags []tag.Tag) bool {
	for _, t := range tags {
		if t == nil || t.Key() != "error" {
			continue
		}
		text := fmt.Sprint(t.Value())
		return text == context.Canceled.Error() || strings.HasSuffix(text, ": "+context.Canceled.Error())
	}
	return false
}

func tagsToAttrs(tags []tag.Tag) []slog.Attr {
	attrs := make([]slog.Attr, 0, len(tags))
	for _, t := range tags {
		if t == nil {
			continue
		}
		attrs = append(attrs, slog.Any(t.Key(), t.Value()))
	}
	return attrs
}

// minLevelHandler drops records below min before they reach next.
type minLevelHandler struct {
	min  slog.Leveler
	next slog.Handler
}

func (h *minLevelHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= h.min.Level() && h.next.Enabled(ctx, level)
}

func (h *minLevelHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.next.Handle(ctx, r)
}

func (h *minLevelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &minLevelHandler{min: h.min, next: h.next.WithAttrs(attrs)}
}

func (h *minLevelHandler) WithGroup(name string) slog.Handler {
	return &minLevelHandler{min: h.min, next: h.next.WithGroup(name)}
}

// fatalDetail is the one-line detail of a fatal record: its error, address
// and service tags, if any.
func fatalDetail(tags []tag.Tag) string {
	var b strings.Builder
	for _, t := range tags {
		switch t.Key() {
		case "error", "address", "service":
			fmt.Fprintf(&b, "; %s %v", t.Key(), t.Value())
		}
	}
	return b.String()
}
