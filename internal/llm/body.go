package llm

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// headBytes is how much of a response body is kept to be shown when the
// body turns out not to be the protocol.
const headBytes = 512

// markerLine bounds the line kept to recognise the end-of-stream marker.
const markerLine = 32

// bodyWatch wraps a response body and notes, as go-openai reads it, its
// first bytes, whether an SSE "data: [DONE]" line went by, and how reading
// ended: at the clean end of the body or with a transport failure.
type bodyWatch struct {
	rc io.ReadCloser

	mu       sync.Mutex
	head     []byte
	line     []byte
	longLine bool
	st       bodyState
}

// bodyState is what a bodyWatch saw.
type bodyState struct {
	// Head is the first bytes of the body.
	Head []byte
	// Done: an SSE end-of-stream marker was read.
	Done bool
	// EOF: the body was read to its end.
	EOF bool
	// Err is the first read failure other than the end of the body (a
	// connection that broke), nil when there was none.
	Err error
	// Bytes counts the bytes read.
	Bytes int64
}

func newBodyWatch(rc io.ReadCloser) *bodyWatch { return &bodyWatch{rc: rc} }

func (w *bodyWatch) Read(p []byte) (int, error) {
	n, err := w.rc.Read(p)
	w.mu.Lock()
	w.observe(p[:n], err)
	w.mu.Unlock()
	return n, err
}

func (w *bodyWatch) Close() error { return w.rc.Close() }

// fill reads the first bytes of the body, for a body that will not be
// decoded but shown.
func (w *bodyWatch) fill() {
	buf := make([]byte, headBytes)
	_, _ = io.ReadFull(w, buf)
}

func (w *bodyWatch) observe(b []byte, err error) {
	w.st.Bytes += int64(len(b))
	if room := headBytes - len(w.head); room > 0 {
		w.head = append(w.head, b[:min(room, len(b))]...)
	}
	for _, c := range b {
		if c != '\n' {
			if len(w.line) < markerLine {
				w.line = append(w.line, c)
			} else {
				w.longLine = true
			}
			continue
		}
		w.endLine()
	}
	switch {
	case errors.Is(err, io.EOF):
		w.endLine()
		w.st.EOF = true
	case err != nil && w.st.Err == nil:
		w.st.Err = err
	}
}

// endLine checks the line just completed for the end-of-stream marker.
func (w *bodyWatch) endLine() {
	if !w.longLine && isDoneLine(w.line) {
		w.st.Done = true
	}
	w.line, w.longLine = w.line[:0], false
}

func (w *bodyWatch) state() bodyState {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.st
	st.Head = append([]byte(nil), w.head...)
	return st
}

// isDoneLine reports whether an SSE line is the "[DONE]" marker. Pure.
func isDoneLine(line []byte) bool {
	rest, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
	return ok && string(bytes.TrimSpace(rest)) == "[DONE]"
}

// printable makes untrusted text fit one line of an error message: invalid
// UTF-8 and control characters become spaces or U+FFFD, runs of white space
// one space, and the result is cut to at most max bytes (at a character
// boundary, marked with "…"). Pure.
func printable(s string, max int) string {
	var b strings.Builder
	space := false
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		switch {
		case r == utf8.RuneError && size <= 1:
			r = unicode.ReplacementChar
		case unicode.IsSpace(r) || unicode.IsControl(r):
			space = b.Len() > 0
			continue
		case !unicode.IsPrint(r):
			r = unicode.ReplacementChar
		}
		need := utf8.RuneLen(r)
		if space {
			need++
		}
		if b.Len()+need > max {
			return b.String() + "…"
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
