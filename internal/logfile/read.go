package logfile

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
)

// Line is one line of a log file, with the kind of process that wrote it.
type Line struct {
	Kind string
	Text string
	// at is the line's timestamp ("" when it has none: it then sorts with
	// the line before it in its file).
	at string
}

// tailChunk is how much is read from a file's end at a time.
const tailChunk = 64 << 10

// Tail returns the last n lines of the file at path (all of them when it
// holds fewer).
func Tail(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	var buf []byte
	for off := size; ; {
		start := max(off-tailChunk, 0)
		chunk := make([]byte, off-start)
		if _, err := f.ReadAt(chunk, start); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		buf = append(chunk, buf...)
		off = start
		if off == 0 || bytes.Count(buf, []byte{'\n'}) > n {
			break
		}
	}
	return lastLines(string(buf), n), nil
}

// lastLines is the last n lines of text (a missing final newline ends the
// last line all the same). Pure.
func lastLines(text string, n int) []string {
	text = strings.TrimSuffix(text, "\n")
	if text == "" || n <= 0 {
		return nil
	}
	lines := strings.Split(text, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// timestamp is the time a log line starts with (slog's "time=..." or
// gRPC's "2006/01/02 15:04:05"), in a form that sorts; "" when there is
// none.
func timestamp(line string) string {
	if rest, ok := strings.CutPrefix(line, "time="); ok {
		end := strings.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		t, err := time.Parse(time.RFC3339Nano, rest[:end])
		if err != nil {
			return ""
		}
		return t.UTC().Format(sortable)
	}
	// gRPC's logger: "2006/01/02 15:04:05 WARNING: ...", local time.
	if len(line) >= len(grpcTime) {
		if t, err := time.ParseInLocation(grpcTime, line[:len(grpcTime)], time.Local); err == nil {
			return t.UTC().Format(sortable)
		}
	}
	return ""
}

const (
	sortable = "2006-01-02T15:04:05.000000000"
	grpcTime = "2006/01/02 15:04:05"
)

// Merge interleaves the lines of several files by time, keeping each
// file's order, and returns the last n. Pure.
func Merge(byKind map[string][]string, n int) []Line {
	var all []Line
	kinds := slices.Sorted(maps.Keys(byKind))
	for _, k := range kinds {
		prev := ""
		for _, text := range byKind[k] {
			at := cmp.Or(timestamp(text), prev)
			prev = at
			all = append(all, Line{Kind: k, Text: text, at: at})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].at < all[j].at })
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return all
}

// Follower reads what is appended to a log file, across rotation (the
// file renamed and a new one made at its path) and truncation.
type Follower struct {
	path    string
	f       *os.File
	off     int64
	partial []byte
}

// NewFollower follows path from its current end (from the start when it
// does not exist yet).
func NewFollower(path string) *Follower {
	fl := &Follower{path: path}
	if f, err := os.Open(path); err == nil {
		fl.f = f
		if st, err := f.Stat(); err == nil {
			fl.off = st.Size()
		}
	}
	return fl
}

// Close closes the open file.
func (fl *Follower) Close() {
	if fl.f != nil {
		fl.f.Close()
		fl.f = nil
	}
}

// Poll returns the complete lines appended since the last call.
func (fl *Follower) Poll() ([]string, error) {
	var lines []string
	if fl.f == nil {
		f, err := os.Open(fl.path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		fl.f, fl.off = f, 0
	}
	cur, err := fl.f.Stat()
	if err != nil {
		return nil, err
	}
	if cur.Size() < fl.off { // truncated
		fl.off = 0
	}
	got, err := fl.read()
	lines = append(lines, got...)
	if err != nil {
		return lines, err
	}
	// Rotated: the name now holds another file. The old one is read to
	// its end above; the new one is read from its start.
	if st, err := os.Stat(fl.path); err == nil && !os.SameFile(st, cur) {
		fl.f.Close()
		fl.f, fl.off = nil, 0
		if len(fl.partial) > 0 {
			lines = append(lines, string(fl.partial))
			fl.partial = nil
		}
		more, err := fl.Poll()
		return append(lines, more...), err
	}
	return lines, nil
}

// read reads from the offset to the end and splits complete lines.
func (fl *Follower) read() ([]string, error) {
	if _, err := fl.f.Seek(fl.off, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(bufio.NewReader(fl.f))
	fl.off += int64(len(data))
	data = append(fl.partial, data...)
	var lines []string
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, string(data[:i]))
		data = data[i+1:]
	}
	fl.partial = append([]byte(nil), data...)
	return lines, err
}

// Follow calls emit with every line appended to the log files of home
// (the kinds given; all of them, including ones that appear later, when
// kinds is empty) until ctx ends, polling every interval.
func Follow(ctx context.Context, home string, kinds []string, interval time.Duration, emit func(Line)) error {
	followers := map[string]*Follower{}
	defer func() {
		for _, f := range followers {
			f.Close()
		}
	}()
	add := func(k string, fromStart bool) {
		if _, ok := followers[k]; ok {
			return
		}
		if fromStart {
			followers[k] = &Follower{path: Path(home, k)}
		} else {
			followers[k] = NewFollower(Path(home, k))
		}
	}
	for _, k := range kinds {
		add(k, false)
	}
	fixed := len(kinds) > 0
	if !fixed {
		existing, _ := Files(home)
		for _, k := range existing {
			add(k, false)
		}
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if !fixed {
			current, _ := Files(home)
			for _, k := range current {
				add(k, true) // appeared while following: all of it is new
			}
		}
		names := slices.Sorted(maps.Keys(followers))
		for _, k := range names {
			lines, err := followers[k].Poll()
			for _, l := range lines {
				emit(Line{Kind: k, Text: l})
			}
			if err != nil {
				return fmt.Errorf("follow %s: %w", Path(home, k), err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
