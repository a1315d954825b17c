package logfile

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFormatLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		level slog.Level
		msg   string
		attrs []slog.Attr
		want  string
	}{
		{"info", slog.LevelInfo, "removed old outputs", nil, "talaria: removed old outputs"},
		{"warning with attrs", slog.LevelWarn, "store path readable", []slog.Attr{slog.String("path", "/x"), slog.Int("n", 2)},
			"talaria: warning: store path readable (path=/x, n=2)"},
		{"error", slog.LevelError, "cron tick failed", []slog.Attr{slog.Any("error", errors.New("boom"))},
			"talaria: error: cron tick failed (error=boom)"},
		{"line breaks folded", slog.LevelWarn, "two\nlines", []slog.Attr{slog.String("hint", "a\n  b")},
			"talaria: warning: two lines (hint=a b)"},
		{"empty values left out", slog.LevelWarn, "m", []slog.Attr{slog.String("k", "")}, "talaria: warning: m"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := FormatLine(c.level, c.msg, c.attrs); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestParseLevel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]slog.Level{"": slog.LevelWarn, "debug": slog.LevelDebug, "info": slog.LevelInfo,
		"warn": slog.LevelWarn, "error": slog.LevelError, "loud": slog.LevelWarn} {
		if got := ParseLevel(in); got != want {
			t.Errorf("ParseLevel(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestRouting: Temporal's records reach only the file, Talaria's own reach
// the file and (at the level) the terminal as one line; at debug
// everything reaches the terminal.
func TestRouting(t *testing.T) {
	t.Parallel()
	for _, level := range []string{"warn", "debug"} {
		t.Run(level, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			var term bytes.Buffer
			logs, err := Open(Options{Home: home, Kind: "chat", Level: level, Terminal: &term, CreateDir: true})
			if err != nil {
				t.Fatal(err)
			}
			defer logs.Close()
			h, ok := ForTemporal(logs.Logger.With("component", "x"))
			if !ok {
				t.Fatal("a logger from Open has no Temporal route")
			}
			slog.New(h).Error("Activity error.", "WorkerID", "w1", "RunID", "r1")
			logs.Logger.Info("routine")
			logs.Logger.Warn("own warning", "path", "/p")

			data, err := os.ReadFile(Path(home, "chat"))
			if err != nil {
				t.Fatal(err)
			}
			file := string(data)
			for _, want := range []string{`msg="Activity error."`, "WorkerID=w1", "msg=routine", `msg="own warning"`} {
				if !strings.Contains(file, want) {
					t.Errorf("log file lacks %q:\n%s", want, file)
				}
			}
			got := term.String()
			if level == "warn" {
				if got != "talaria: warning: own warning (component=x, path=/p)\n" && got != "talaria: warning: own warning (path=/p)\n" {
					t.Errorf("terminal = %q", got)
				}
			} else if !strings.Contains(got, "Activity error.") || !strings.Contains(got, "own warning") {
				t.Errorf("debug terminal lacks records: %q", got)
			}
			st, err := os.Stat(Path(home, "chat"))
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("log file mode = %v, %v", st.Mode(), err)
			}
			if st, err := os.Stat(Dir(home)); err != nil || st.Mode().Perm() != 0o700 {
				t.Errorf("log dir mode = %v, %v", st.Mode(), err)
			}
		})
	}
}

// TestOpenWithoutCreateMakesNothing: a reading command logs to no file
// when the log directory does not exist, and creates none.
func TestOpenWithoutCreateMakesNothing(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "absent")
	var term bytes.Buffer
	logs, err := Open(Options{Home: home, Kind: "cli", Level: "warn", Terminal: &term})
	if err != nil || logs.File != "" {
		t.Fatalf("Open = %+v, %v", logs, err)
	}
	h, _ := ForTemporal(logs.Logger)
	slog.New(h).Error("Activity error.")
	if term.Len() != 0 {
		t.Fatalf("a Temporal record reached the terminal: %q", term.String())
	}
	if _, err := os.Stat(home); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("home was created: %v", err)
	}
}

func TestLastLines(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		n    int
		want string
	}{
		{"", 3, ""},
		{"a\nb\nc\n", 2, "b|c"},
		{"a\nb\nc", 2, "b|c"},
		{"a\n", 5, "a"},
		{"a\nb\n", 0, ""},
	}
	for _, c := range cases {
		if got := strings.Join(lastLines(c.text, c.n), "|"); got != c.want {
			t.Errorf("lastLines(%q, %d) = %q, want %q", c.text, c.n, got, c.want)
		}
	}
}

func TestTailReadsAcrossChunks(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.log")
	var b strings.Builder
	for i := range 20000 {
		b.WriteString(strings.Repeat("x", 10) + string(rune('a'+i%26)) + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	lines, err := Tail(path, 15000)
	if err != nil || len(lines) != 15000 {
		t.Fatalf("Tail = %d lines, %v", len(lines), err)
	}
	if lines[14999] != strings.Repeat("x", 10)+string(rune('a'+19999%26)) {
		t.Fatalf("last line %q", lines[14999])
	}
}

func TestTimestamp(t *testing.T) {
	t.Parallel()
	local := time.Date(2026, 1, 1, 10, 0, 2, 0, time.Local).UTC().Format(sortable)
	cases := map[string]string{
		"time=2026-01-01T10:00:01.5+01:00 level=INFO msg=a": "2026-01-01T09:00:01.500000000",
		"2026/01/01 10:00:02 WARNING: [core] grpc: closing": local,
		"continuation of a record":                          "",
		"time=garbage msg=x":                                "",
	}
	for line, want := range cases {
		if got := timestamp(line); got != want {
			t.Errorf("timestamp(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	got := Merge(map[string][]string{
		"serve": {"time=2026-01-01T10:00:01.000Z level=INFO msg=a", "continuation", "time=2026-01-01T10:00:03.000Z msg=c"},
		"chat":  {"time=2026-01-01T10:00:02.000Z msg=b", "time=2026-01-01T10:00:04.000Z msg=d"},
	}, 4)
	var order []string
	for _, l := range got {
		order = append(order, l.Kind+":"+l.Text[strings.LastIndex(l.Text, " ")+1:])
	}
	want := "serve:continuation chat:msg=b serve:msg=c chat:msg=d"
	if strings.Join(order, " ") != want {
		t.Fatalf("merge order %q, want %q", strings.Join(order, " "), want)
	}
}

// TestFollowAcrossRotation: lines written before and after the file is
// renamed away and made again all arrive, once, in order.
func TestFollowAcrossRotation(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := os.MkdirAll(Dir(home), 0o700); err != nil {
		t.Fatal(err)
	}
	path := Path(home, "serve")
	appendTo := func(p, s string) {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	appendTo(path, "old line\n")
	fl := NewFollower(path)
	defer fl.Close()
	var got []string
	poll := func() {
		lines, err := fl.Poll()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, lines...)
	}
	poll()
	appendTo(path, "one\ntw")
	poll()
	appendTo(path, "o\n")
	if err := os.Rename(path, filepath.Join(Dir(home), "serve-1.log")); err != nil {
		t.Fatal(err)
	}
	appendTo(filepath.Join(Dir(home), "serve-1.log"), "three\n")
	appendTo(path, "four\n")
	poll()
	os.Truncate(path, 0)
	appendTo(path, "5\n") // shorter than what was read: truncated
	poll()
	if strings.Join(got, "|") != "one|two|three|four|5" {
		t.Fatalf("followed %q", got)
	}
}

// TestFollowFindsNewFiles: following all logs picks up a file made while
// following, from its start.
func TestFollowFindsNewFiles(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	os.MkdirAll(Dir(home), 0o700)
	os.WriteFile(Path(home, "serve"), []byte("before\n"), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	lines := make(chan Line, 10)
	done := make(chan error, 1)
	go func() { done <- Follow(ctx, home, nil, 10*time.Millisecond, func(l Line) { lines <- l }) }()
	time.Sleep(50 * time.Millisecond)
	os.WriteFile(Path(home, "chat"), []byte("hello\n"), 0o600)
	select {
	case l := <-lines:
		if l.Kind != "chat" || l.Text != "hello" {
			t.Fatalf("got %+v", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a new log file was not followed")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
