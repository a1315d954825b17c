package tools

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// omittedMarker is inserted where output was cut out of the middle.
func omittedMarker(n int) string {
	return fmt.Sprintf("\n[... %d characters omitted ...]\n", n)
}

// capMiddle limits s to max characters, keeping the head and the tail and
// replacing the middle with a marker that says how much was left out.
func capMiddle(s string, max int) string { return capMiddleNote(s, max, "") }

// capMiddleNote is capMiddle with a note after the marker (where the whole
// is kept).
func capMiddleNote(s string, max int, note string) string {
	total := utf8.RuneCountInString(s)
	if max <= 0 || total <= max {
		return s
	}
	headRunes := max / 2
	tailRunes := max - headRunes
	head := s[:byteOffsetOfRune(s, headRunes)]
	tail := s[byteOffsetOfRune(s, total-tailRunes):]
	marker := omittedMarker(total - headRunes - tailRunes)
	if note != "" {
		marker += note + "\n"
	}
	return head + marker + tail
}

// byteOffsetOfRune returns the byte offset of the n-th rune of s.
func byteOffsetOfRune(s string, n int) int {
	i := 0
	for off := range s {
		if i == n {
			return off
		}
		i++
	}
	return len(s)
}

// truncateUTF8 cuts s to at most maxBytes bytes without splitting a rune.
func truncateUTF8(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	cut := maxBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// headTailBuffer is an io.Writer that keeps the first and the last bytes of
// a stream within a fixed budget, counting everything in between, so a
// command printing gigabytes costs bounded memory.
type headTailBuffer struct {
	limit      int // total byte budget
	head       []byte
	tail       []byte // holds at most 2*tailLimit bytes, compacted on overflow
	total      int    // bytes written
	totalRunes int    // rune starts written
	// note, when set, follows the omission marker (where the full output
	// is kept).
	note string
}

func newHeadTailBuffer(limit int) *headTailBuffer {
	if limit < 2 {
		limit = 2
	}
	return &headTailBuffer{limit: limit}
}

func (b *headTailBuffer) headLimit() int { return b.limit / 2 }
func (b *headTailBuffer) tailLimit() int { return b.limit - b.limit/2 }

// Write never fails.
func (b *headTailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	b.total += n
	for _, c := range p {
		if utf8.RuneStart(c) {
			b.totalRunes++
		}
	}
	if room := b.headLimit() - len(b.head); room > 0 {
		take := min(room, len(p))
		b.head = append(b.head, p[:take]...)
		p = p[take:]
	}
	if len(p) == 0 {
		return n, nil
	}
	tl := b.tailLimit()
	if len(p) >= tl {
		b.tail = append(b.tail[:0], p[len(p)-tl:]...)
		return n, nil
	}
	b.tail = append(b.tail, p...)
	if len(b.tail) > 2*tl {
		keep := b.tail[len(b.tail)-tl:]
		b.tail = append(b.tail[:0], keep...)
	}
	return n, nil
}

// cut reports whether String leaves out part of the output: the stream
// exceeded the budget, or what was kept would exceed it once weighed
// against the cap (capLen: a control byte escaped in JSON takes six
// characters).
func (b *headTailBuffer) cut() bool {
	return b.total > b.limit || capLen(string(b.head))+capLen(string(b.tail)) > b.limit
}

// String returns the captured output; when it is cut, the head and the
// tail, each within its half of the budget (capLen), are
// joined by an omission marker.
func (b *headTailBuffer) String() string {
	if !b.cut() {
		return string(b.head) + string(b.tail)
	}
	if b.total <= b.limit {
		// Everything is here; only its escaped length is too much.
		return capMiddleJSON(string(b.head)+string(b.tail), b.limit, b.note, capRuneLen)
	}
	tail := b.tail
	if tl := b.tailLimit(); len(tail) > tl {
		tail = tail[len(tail)-tl:]
	}
	head := string(b.head)
	// Drop a rune split at the end of the head or the start of the tail.
	if r, size := utf8.DecodeLastRuneInString(head); r == utf8.RuneError && size <= 1 {
		head = truncateUTF8(head, len(head)-1)
	}
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	head = escPrefix(head, b.headLimit(), capRuneLen)
	tailText := escSuffix(string(tail), b.tailLimit(), capRuneLen)
	omitted := b.totalRunes - utf8.RuneCountInString(head) - utf8.RuneCountInString(tailText)
	if omitted < 0 {
		omitted = 0
	}
	marker := omittedMarker(omitted)
	if b.note != "" {
		marker += b.note + "\n"
	}
	return head + marker + tailText
}

// marshalResult renders a tool result as compact JSON. The result types are
// plain structs, so marshalling cannot fail in practice; the error is still
// reported rather than ignored.
func marshalResult(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode result: %w", err)
	}
	return string(data), nil
}
