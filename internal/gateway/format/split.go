package format

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

const (
	// TelegramLimit is the Bot API's limit for a message text, in UTF-16
	// code units.
	TelegramLimit = 4096
	// SlackLimit is the limit of the mrkdwn text of a Slack section block.
	SlackLimit = 3000
	// DiscordLimit is Discord's limit for a message's content.
	DiscordLimit = 2000
	// WhatsAppLimit is a WhatsApp text message's limit.
	WhatsAppLimit = 4096
	// MinLimit is the smallest limit Split honours; smaller ones are
	// raised to it.
	MinLimit = 16
)

// Split renders Markdown in a flavour as one or more messages, each at
// most limit UTF-16 code units long and each valid on its own (see the
// package documentation for how breaks are chosen). It returns no parts
// for input with no visible text. A limit of zero or less means the
// flavour's own Limit.
func Split(md string, limit int, f Flavour) []string {
	if limit <= 0 {
		limit = f.Limit()
	}
	limit = max(limit, MinLimit)
	d := newDoc(md, f)
	var parts []string
	for s := d.skipLead(0); s < len(d.text); s = d.skipLead(s) {
		e, plain := d.next(s, limit)
		if t := d.trimEnd(s, e); t > s {
			parts = append(parts, d.render(s, t, plain))
		}
		s = e
	}
	return parts
}

// doc is a flavour's runs with their text laid end to end.
type doc struct {
	f      Flavour
	runs   []run
	starts []int // byte offset of each run in text
	text   string
}

func newDoc(md string, f Flavour) *doc {
	runs := prepare(parse(md, f == FlavourTelegramHTML), f)
	d := &doc{f: f, runs: runs, starts: make([]int, len(runs))}
	var sb strings.Builder
	for i, r := range runs {
		d.starts[i] = sb.Len()
		sb.WriteString(r.text)
	}
	d.text = sb.String()
	return d
}

// runAt is the index of the run holding byte offset p.
func (d *doc) runAt(p int) int {
	return sort.Search(len(d.starts), func(i int) bool { return d.starts[i] > p }) - 1
}

func (d *doc) inPre(p int) bool {
	i := d.runAt(p)
	return i >= 0 && d.runs[i].pre
}

// slice is the runs covering text[s:e].
func (d *doc) slice(s, e int) []run {
	var out []run
	for i := d.runAt(s); i < len(d.runs) && d.starts[i] < e; i++ {
		r := d.runs[i]
		lo, hi := max(s-d.starts[i], 0), min(e-d.starts[i], len(r.text))
		if lo < hi {
			r.text = r.text[lo:hi]
			out = append(out, r)
		}
	}
	return out
}

func (d *doc) render(s, e int, plain bool) string {
	if s >= e {
		return ""
	}
	return serialize(d.slice(s, e), d.f, plain)
}

// skipLead skips the whitespace a part does not start with: newlines,
// and blanks outside code blocks.
func (d *doc) skipLead(s int) int {
	for s < len(d.text) {
		c := d.text[s]
		if c != '\n' && (c != ' ' && c != '\t' || d.inPre(s)) {
			break
		}
		s++
	}
	return s
}

// trimEnd drops trailing whitespace from text[s:e].
func (d *doc) trimEnd(s, e int) int {
	for e > s && strings.IndexByte(" \t\n", d.text[e-1]) >= 0 {
		e--
	}
	return e
}

func (d *doc) fits(s, e, limit int, plain bool) bool {
	return units(d.render(s, d.trimEnd(s, e), plain)) <= limit
}

// next chooses the end of the part starting at s, and whether the part
// must drop its markup to fit.
func (d *doc) next(s, limit int) (int, bool) {
	// Every rune costs at least one unit, so a part holds at most limit
	// runes: ends are searched among the next limit rune boundaries.
	pos := make([]int, 0, min(limit, len(d.text)-s))
	for p := s; p < len(d.text) && len(pos) < limit; {
		_, n := utf8.DecodeRuneInString(d.text[p:])
		p += n
		pos = append(pos, p)
	}
	plain := false
	k := sort.Search(len(pos), func(i int) bool { return !d.fits(s, pos[i], limit, false) })
	if k == 0 {
		// Not one rune fits with its markup: write the run it starts
		// without markup.
		plain = true
		runEnd := len(d.text)
		if i := d.runAt(s) + 1; i < len(d.starts) {
			runEnd = d.starts[i]
		}
		k = sort.Search(len(pos), func(i int) bool { return pos[i] > runEnd || !d.fits(s, pos[i], limit, true) })
		k = max(k, 1)
	}
	hi := pos[k-1]
	if hi == len(d.text) || plain {
		return d.hardBreak(s, hi), plain
	}
	floor := s + (hi-s)/3
	if p := strings.LastIndex(d.text[s:min(hi+2, len(d.text))], "\n\n"); p > 0 && s+p >= floor {
		return s + p, false
	}
	if p := strings.LastIndexByte(d.text[s:min(hi+1, len(d.text))], '\n'); p > 0 && s+p >= floor {
		return s + p, false
	}
	for t := min(hi+1, len(d.text)); ; {
		p := strings.LastIndexAny(d.text[s:t], " \t")
		if p <= 0 || s+p < floor {
			break
		}
		if !d.inPre(s + p) {
			return s + p, false
		}
		t = s + p
	}
	return d.hardBreak(s, hi), false
}

// hardBreak moves a break at e back so that it does not part a base
// character from what combines with it, unless that would leave nothing.
func (d *doc) hardBreak(s, e int) int {
	for b := e; b > s; {
		if b == len(d.text) || !joins(d.text[:b], d.text[b:]) {
			return b
		}
		_, n := utf8.DecodeLastRuneInString(d.text[s:b])
		b -= n
	}
	return e
}

// joins says whether a break between before and after would split a
// grapheme: after starts with a combining mark, variation selector,
// joiner or emoji modifier, or before ends with a joiner.
func joins(before, after string) bool {
	r, _ := utf8.DecodeRuneInString(after)
	l, _ := utf8.DecodeLastRuneInString(before)
	return l == '\u200D' || r == '\u200D' || unicode.In(r, unicode.Mn, unicode.Me, unicode.Variation_Selector) ||
		r >= 0x1F3FB && r <= 0x1F3FF || r >= 0xE0020 && r <= 0xE007F
}

// units is the length of s in UTF-16 code units.
func units(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
