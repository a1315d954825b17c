package events

import (
	"encoding/json"
	"strings"
)

// Shown follows the reply text of a turn for a door that cannot take back
// what it showed (a terminal, an OpenAI-compatible stream). A retried
// model call's attempt streams its text from the start (KindAttempt):
// Shown lets through only what goes beyond the text already shown, so
// nothing is repeated. An attempt whose text differs from what was shown
// is reported as restarted, with its whole text so far; the door says so
// (or ends) rather than show a mix. The zero value is ready.
type Shown struct {
	call  int
	shown strings.Builder
	// replaying: a new attempt of the call is retracing the shown text,
	// which it has matched up to pos.
	replaying bool
	pos       int
}

// Attempt takes the data of a KindAttempt event: a new call starts its
// text afresh (newCall), a new attempt of the same call retraces it.
func (s *Shown) Attempt(data string) (newCall bool) {
	var a AttemptEvent
	if json.Unmarshal([]byte(data), &a) != nil {
		return false
	}
	if a.Call != s.call {
		s.call, s.replaying, s.pos = a.Call, false, 0
		s.shown.Reset()
		return true
	}
	s.replaying, s.pos = s.shown.Len() > 0, 0
	return false
}

// Delta takes a piece of reply text and returns what to show of it. When
// restarted is true the attempt's text differs from what was shown: show
// is the attempt's whole text so far, and what was shown before is not
// part of the answer.
func (s *Shown) Delta(d string) (show string, restarted bool) {
	if !s.replaying {
		s.shown.WriteString(d)
		return d, false
	}
	old := s.shown.String()
	rest := old[s.pos:]
	k := commonPrefix(rest, d)
	switch {
	case k == len(d): // all of it was shown already
		s.pos += k
		s.replaying = s.pos < len(old)
		return "", false
	case k == len(rest): // it goes beyond what was shown
		s.replaying = false
		s.shown.WriteString(d[k:])
		return d[k:], false
	}
	text := old[:s.pos] + d
	s.replaying = false
	s.shown.Reset()
	s.shown.WriteString(text)
	return text, true
}

// commonPrefix is the length of the longest common prefix of a and b, in
// bytes, cut back to a UTF-8 boundary. Pure.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	for i > 0 && i < len(b) && !startsRune(b[i]) {
		i--
	}
	return i
}

// startsRune reports whether c begins a UTF-8 sequence. Pure.
func startsRune(c byte) bool { return c&0xC0 != 0x80 }
