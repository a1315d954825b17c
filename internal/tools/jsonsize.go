package tools

import (
	"encoding/json"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// jsonRuneLen is how many characters one rune of a string takes once
// encoding/json has escaped it (size is its byte length; an invalid byte
// becomes \ufffd). Pure; errs on the long side.
func jsonRuneLen(r rune, size int) int {
	switch {
	case r == utf8.RuneError && size <= 1:
		return 6
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20, r == '<', r == '>', r == '&', r == '\u2028', r == '\u2029':
		return 6
	}
	return 1
}

// capRuneLen is what one rune counts against a tool's output cap: one
// character, but six for a rune escaped as \uXXXX (control bytes, invalid
// bytes, <, >, &). The short escapes (\n, \", ...) count one, so ordinary
// text is capped as before and its JSON stays within twice the cap. Pure.
func capRuneLen(r rune, size int) int {
	if n := jsonRuneLen(r, size); n == 6 {
		return 6
	}
	return 1
}

// runeWeight is how much one rune (size bytes) counts.
type runeWeight func(r rune, size int) int

// escLen is the length in characters of s escaped as a JSON string,
// without the quotes.
func escLen(s string) int { return weighLen(s, jsonRuneLen) }

// capLen is the length of s against a tool's output cap (capRuneLen).
func capLen(s string) int { return weighLen(s, capRuneLen) }

// weighLen sums the weights of the runes of s.
func weighLen(s string, weight runeWeight) int {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		n += weight(r, size)
		i += size
	}
	return n
}

// escPrefix is the longest prefix of s, cut at a rune, whose weighed
// length is at most budget.
func escPrefix(s string, budget int, weight runeWeight) string {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if n += weight(r, size); n > budget {
			return s[:i]
		}
		i += size
	}
	return s
}

// escSuffix is the longest suffix of s, starting at a rune, whose
// weighed length is at most budget.
func escSuffix(s string, budget int, weight runeWeight) string {
	n := 0
	for i := len(s); i > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if n += weight(r, size); n > budget {
			return s[i:]
		}
		i -= size
	}
	return s
}

// capMiddleJSON is capMiddleNote measured after JSON escaping: head and
// tail of s together weigh at most budget (jsonRuneLen: characters once
// escaped; capRuneLen: against a tool's cap), so a text full of control
// bytes (six characters each when escaped) is cut before it is encoded,
// never after.
func capMiddleJSON(s string, budget int, note string, weight runeWeight) string {
	if weighLen(s, weight) <= budget {
		return s
	}
	head := escPrefix(s, budget/2, weight)
	tail := escSuffix(s[len(head):], budget-budget/2, weight)
	omitted := utf8.RuneCountInString(s) - utf8.RuneCountInString(head) - utf8.RuneCountInString(tail)
	marker := omittedMarker(omitted)
	if note != "" {
		marker += note + "\n"
	}
	return head + marker + tail
}

// markerAllowance is room left for omission markers and notes when a
// document is cut to a cap.
const markerAllowance = 120

// boundJSON cuts the longest string values of the JSON document doc (the
// text of each cut before it is encoded again) until the document is
// about limit characters long; note goes into the first marker. The
// document stays valid JSON with its keys and order. false when doc is not
// JSON or its strings are not where its size is (a long array of numbers).
func boundJSON(doc string, limit int, note string) (string, bool) {
	type literal struct {
		start, end int
		value      string
	}
	if !json.Valid([]byte(doc)) {
		return "", false
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var lits []literal
	for {
		prev := int(dec.InputOffset())
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", false
		}
		if s, ok := tok.(string); ok {
			end := int(dec.InputOffset())
			q := strings.IndexByte(doc[prev:end], '"')
			if q < 0 {
				return "", false
			}
			lits = append(lits, literal{start: prev + q, end: end, value: s})
		}
	}
	order := make([]int, len(lits))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return lits[order[a]].end-lits[order[a]].start > lits[order[b]].end-lits[order[b]].start
	})
	excess := utf8.RuneCountInString(doc) - limit
	replaced := map[int]string{}
	for _, i := range order {
		if excess <= 0 {
			break
		}
		l := lits[i]
		raw := utf8.RuneCountInString(doc[l.start:l.end])
		budget := raw - excess - markerAllowance - escLen(note)
		if budget < 64 {
			budget = 64
		}
		cut := capMiddleJSON(l.value, budget, note, jsonRuneLen)
		if cut == l.value {
			continue
		}
		enc, err := json.Marshal(cut)
		if err != nil {
			return "", false
		}
		replaced[i] = string(enc)
		excess -= raw - utf8.RuneCount(enc)
		note = ""
	}
	if excess > markerAllowance {
		return "", false
	}
	var b strings.Builder
	at := 0
	for i, l := range lits {
		if enc, ok := replaced[i]; ok {
			b.WriteString(doc[at:l.start])
			b.WriteString(enc)
			at = l.end
		}
	}
	b.WriteString(doc[at:])
	return b.String(), true
}

// cutResult is a tool result far above the cap cut to it: a JSON document
// keeps its shape with its long strings cut (or, when that cannot bound
// it, becomes {"truncated_result": head and tail of its text}); other text
// is cut in the middle. note says where the whole is kept. The result is
// valid JSON whenever content was.
func cutResult(content string, limit int, note string) string {
	if !json.Valid([]byte(content)) {
		return capMiddleNote(content, limit, note)
	}
	if out, ok := boundJSON(content, limit, note); ok {
		return out
	}
	out, err := marshalResult(struct {
		Truncated string `json:"truncated_result"`
	}{capMiddleJSON(content, max(limit-markerAllowance, 64), note, jsonRuneLen)})
	if err != nil {
		return capMiddleNote(content, limit, note)
	}
	return out
}
