package textline

import (
	"fmt"
	"io"
	"sync"
)

// Writer passes text to a terminal (or a file a person will print) with
// its control characters made visible: an escape sequence in a model's
// answer, a job's name or a stored message (one that would write the
// clipboard, retitle the window or clear the screen) is printed as \x1b
// and the rest of it as text. New lines, tabs and NULs (which terminals
// ignore: a reply is printed byte for byte) pass; carriage returns (which
// let a line be printed over) are dropped. A UTF-8 sequence cut
// between two writes is seen whole. Safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte // a lead byte of a two-byte sequence, cut at the last write
}

// NewWriter is a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p with its control characters made visible; it reports
// len(p) written when all of it was.
func (t *Writer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in := p
	if len(t.pending) > 0 {
		in = append(t.pending, p...)
		t.pending = nil
	}
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch {
		case c == '\n', c == '\t', c == 0:
			out = append(out, c) // a NUL is text kept byte for byte; terminals ignore it
		case c == '\r':
		case c < 0x20, c == 0x7f:
			out = fmt.Appendf(out, `\x%02x`, c)
		case c == 0xc2 && i == len(in)-1:
			t.pending = []byte{c} // the rest comes with the next write
		case c == 0xc2 && in[i+1] >= 0x80 && in[i+1] < 0xa0:
			out = fmt.Appendf(out, `\u%04x`, in[i+1])
			i++
		default:
			out = append(out, c)
		}
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
