// Package logfile routes a process's logs: Temporal's (SDK and embedded
// server) go only to a rotated file under $TALARIA_HOME/logs, Talaria's own
// records go to the file too and, at the configured level, to the terminal
// as one line each. With debug logging everything also reaches the
// terminal.
//
// Each kind of process writes its own file (serve.log, chat.log,
// worker.log, temporal.log, scheduler.log, cli.log): lumberjack rotates a
// file from within one process and is not safe when two processes rotate
// the same file, and only one serve runs per home. Several chat or cli
// processes at once share their file: appends stay whole lines, and a
// rotation racing another process may leave a few lines in the neighbour's
// backup file, never lose them.
package logfile

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"gopkg.in/natefinch/lumberjack.v2"
)

// Rotation limits: a file rotates at MaxSizeMB and MaxBackups old files
// are kept per kind.
const (
	MaxSizeMB  = 10
	MaxBackups = 5
)

// Dir is where the log files of home live.
func Dir(home string) string { return filepath.Join(home, "logs") }

// Path is the log file of one process kind.
func Path(home, kind string) string { return filepath.Join(Dir(home), kind+".log") }

// Options say where and how much a process logs.
type Options struct {
	// Home is $TALARIA_HOME; empty: no file.
	Home string
	// Kind names the file (serve, chat, worker, ...).
	Kind string
	// Level is Talaria's level on the terminal (debug, info, warn, error).
	Level string
	// Terminal receives Talaria's own lines (and, at debug, everything).
	Terminal io.Writer
	// CreateDir lets Open create the logs directory; a command that only
	// reads logs to a file only when the directory already exists.
	CreateDir bool
}

// Logs is a process's logging: the logger for Talaria's own records, which
// also carries the Temporal route (see Temporal), and the file.
type Logs struct {
	Logger *slog.Logger
	// File is the log file's path; empty when the process logs to no file.
	File string
	file io.WriteCloser
}

// Close flushes and closes the file.
func (l *Logs) Close() error {
	if l == nil || l.file == nil {
		return nil
	}
	return l.file.Close()
}

// Writer is where Temporal's plain-text output (gRPC's logger) goes: the
// file, or nothing when the process has no file.
func (l *Logs) Writer() io.Writer {
	if l == nil || l.file == nil {
		return io.Discard
	}
	return lockedWriter{l.file}
}

// Open sets up the logging of one process. A file that cannot be opened
// is not fatal: the logs then go nowhere but the terminal rules still
// hold, and the reason is returned alongside for one warning.
func Open(o Options) (*Logs, error) {
	level := ParseLevel(o.Level)
	o.Terminal = cmp.Or[io.Writer](o.Terminal, os.Stderr)
	var (
		file    io.WriteCloser
		path    string
		openErr error
	)
	if o.Home != "" && o.Kind != "" {
		path = Path(o.Home, o.Kind)
		file, openErr = openFile(path, o.CreateDir)
		if file == nil {
			path = ""
		}
	}
	fileLevel := min(level, slog.LevelInfo)
	var fileH slog.Handler = slog.DiscardHandler
	if file != nil {
		fileH = slog.NewTextHandler(lockedWriter{file}, &slog.HandlerOptions{Level: fileLevel})
	}
	var own, temporal slog.Handler
	if level <= slog.LevelDebug {
		// Debug: every record, Temporal's too, on the terminal in full.
		term := slog.NewTextHandler(o.Terminal, &slog.HandlerOptions{Level: slog.LevelDebug})
		own = slog.NewMultiHandler(fileH, term)
		temporal = own
	} else {
		own = slog.NewMultiHandler(fileH, &lineHandler{w: o.Terminal, min: level, mu: &sync.Mutex{}})
		temporal = fileH
	}
	logs := &Logs{Logger: slog.New(Split{Handler: own, temporal: temporal}), File: path, file: file}
	return logs, openErr
}

// openFile opens path for appending through lumberjack: the directory is
// 0700 and the file 0600. Without create, a missing directory means no
// file (and no error).
func openFile(path string, create bool) (io.WriteCloser, error) {
	dir := filepath.Dir(path)
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create the log directory %s: %w", dir, err)
		}
	} else if _, err := os.Stat(dir); err != nil {
		return nil, nil
	}
	// lumberjack keeps the mode of an existing file and makes new ones
	// 0600; a file made by someone else is narrowed all the same.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the log file %s: %w", path, err)
	}
	_ = f.Chmod(0o600)
	f.Close()
	return &lumberjack.Logger{Filename: path, MaxSize: MaxSizeMB, MaxBackups: MaxBackups}, nil
}

// ParseLevel reads a configured level; anything else is warn.
func ParseLevel(s string) slog.Level {
	var l slog.Level
	if s == "" || l.UnmarshalText([]byte(s)) != nil {
		return slog.LevelWarn
	}
	return l
}

// Split is the handler of Talaria's own records that also knows where
// Temporal's records go (see ForTemporal).
type Split struct {
	slog.Handler
	temporal slog.Handler
}

// WithAttrs keeps the Temporal route.
func (s Split) WithAttrs(a []slog.Attr) slog.Handler {
	return Split{s.Handler.WithAttrs(a), s.temporal}
}

// WithGroup keeps the Temporal route.
func (s Split) WithGroup(n string) slog.Handler {
	return Split{s.Handler.WithGroup(n), s.temporal}
}

// ForTemporal returns the handler Temporal's records should use when l
// was made by Open, and false otherwise (l is then used as it is).
func ForTemporal(l *slog.Logger) (slog.Handler, bool) {
	if l == nil {
		return nil, false
	}
	if s, ok := l.Handler().(Split); ok {
		return s.temporal, true
	}
	return nil, false
}

// lineHandler writes records at or above min as one line each:
// "talaria: warning: MSG (key=value, ...)".
type lineHandler struct {
	w     io.Writer
	min   slog.Level
	attrs []slog.Attr
	group string
	mu    *sync.Mutex
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	attrs := append([]slog.Attr(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		if h.group != "" {
			a.Key = h.group + "." + a.Key
		}
		attrs = append(attrs, a)
		return true
	})
	line := FormatLine(r.Level, r.Message, attrs)
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, line+"\n")
	return err
}

func (h *lineHandler) WithAttrs(a []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	for _, at := range a {
		if h.group != "" {
			at.Key = h.group + "." + at.Key
		}
		c.attrs = append(c.attrs, at)
	}
	return &c
}

func (h *lineHandler) WithGroup(n string) slog.Handler {
	c := *h
	if c.group != "" {
		n = c.group + "." + n
	}
	c.group = n
	return &c
}

// FormatLine is one terminal line for a record of Talaria's: the level
// (for warnings and errors), the message and the attributes, with line
// breaks folded so that it stays one line. Pure.
func FormatLine(level slog.Level, msg string, attrs []slog.Attr) string {
	var b strings.Builder
	b.WriteString("talaria: ")
	switch {
	case level >= slog.LevelError:
		b.WriteString("error: ")
	case level >= slog.LevelWarn:
		b.WriteString("warning: ")
	}
	b.WriteString(fold(msg))
	if len(attrs) > 0 {
		parts := make([]string, 0, len(attrs))
		for _, a := range attrs {
			v := a.Value.Resolve().String()
			if a.Key == "" || v == "" {
				continue
			}
			parts = append(parts, a.Key+"="+fold(v))
		}
		if len(parts) > 0 {
			b.WriteString(" (" + strings.Join(parts, ", ") + ")")
		}
	}
	return b.String()
}

// fold keeps s on one line.
func fold(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// lockedWriter serialises writes to a lumberjack file shared by the
// handlers of one process (lumberjack locks too; this keeps the text
// handlers' lines whole across handlers).
type lockedWriter struct{ w io.Writer }

var writeMu sync.Mutex

func (l lockedWriter) Write(p []byte) (int, error) {
	writeMu.Lock()
	defer writeMu.Unlock()
	return l.w.Write(p)
}

// Files lists the current (not rotated) log files of home by kind, sorted.
func Files(home string) ([]string, error) {
	entries, err := os.ReadDir(Dir(home))
	if err != nil {
		return nil, err
	}
	var kinds []string
	for _, e := range entries {
		name := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(name, ".log") && !strings.Contains(name, "-") {
			kinds = append(kinds, strings.TrimSuffix(name, ".log"))
		}
	}
	sort.Strings(kinds)
	return kinds, nil
}
