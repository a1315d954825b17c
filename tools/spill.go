package tools

import (
	"fmt"
	"os"
	"unicode/utf8"
)

// MaxSpillBytes bounds the file that keeps a long output in full: a
// command printing gigabytes keeps its first MaxSpillBytes on disk.
const MaxSpillBytes = 256 << 20

// spillWriter keeps the whole output of a command once it passes the cap
// the model sees: the first limit bytes wait in memory; when more arrive,
// they and everything after go to a new file in dir (up to MaxSpillBytes).
// An output within the cap never touches the disk. Write never fails: a
// file that cannot be written is reported by note, and the model still
// gets the head and tail.
type spillWriter struct {
	dir     string
	limit   int
	max     int64 // most bytes kept in the file
	pending []byte
	f       *os.File
	written int64
	total   int64
	err     error
}

func newSpillWriter(dir string, limit int) *spillWriter {
	return &spillWriter{dir: dir, limit: limit, max: MaxSpillBytes}
}

func (w *spillWriter) Write(p []byte) (int, error) {
	w.total += int64(len(p))
	if w.dir == "" || w.err != nil {
		return len(p), nil
	}
	if w.f == nil {
		if len(w.pending)+len(p) <= w.limit {
			w.pending = append(w.pending, p...)
			return len(p), nil
		}
		if err := w.open(); err != nil {
			w.err = err
			return len(p), nil
		}
	}
	if room := w.max - w.written; room > 0 {
		chunk := p[:min(int64(len(p)), room)]
		n, err := w.f.Write(chunk)
		w.written += int64(n)
		if err != nil {
			w.err = fmt.Errorf("write %s: %w", w.f.Name(), err)
		}
	}
	return len(p), nil
}

// open creates the spill file and writes what waited in memory.
func (w *spillWriter) open() error {
	if err := os.MkdirAll(w.dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", w.dir, err)
	}
	f, err := os.CreateTemp(w.dir, "output-*.txt")
	if err != nil {
		return fmt.Errorf("create a file in %s: %w", w.dir, err)
	}
	w.f = f
	n, err := f.Write(w.pending)
	w.written, w.pending = int64(n), nil
	if err != nil {
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	return nil
}

// close finishes the file and returns the note the model reads after the
// omission marker: where the full output is, or why it is not kept.
func (w *spillWriter) close() string {
	if w.f != nil {
		if err := w.f.Close(); err != nil && w.err == nil {
			w.err = fmt.Errorf("close %s: %w", w.f.Name(), err)
		}
	}
	switch {
	case w.f == nil && w.err == nil:
		return ""
	case w.err != nil:
		return fmt.Sprintf("[the full output (%d bytes) could not be kept: %v]", w.total, w.err)
	case w.written < w.total:
		return fmt.Sprintf("[the first %d of %d bytes of the full output are in %s; read them with read_file]", w.written, w.total, w.f.Name())
	}
	return fmt.Sprintf("[the full output (%d bytes) is in %s; read it with read_file (offset/limit)]", w.total, w.f.Name())
}

// path is the spill file, if one was written.
func (w *spillWriter) path() string {
	if w.f == nil || w.err != nil {
		return ""
	}
	return w.f.Name()
}

// boundResult is the net under tools that do not bound their own output
// (terminal and read_file do): a result above twice the output cap
// reaches the model as its head and tail within the cap, and the whole is
// kept in OutputDir like a long terminal output.
func (e Env) boundResult(content string) string {
	limit := e.maxOutput()
	if len(content) <= 2*limit || utf8.RuneCountInString(content) <= 2*limit {
		return content
	}
	w := newSpillWriter(e.OutputDir, 0)
	_, _ = w.Write([]byte(content))
	return capMiddleNote(content, limit, w.close())
}
