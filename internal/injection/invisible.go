package injection

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tag characters (U+E0000..U+E007F) mirror ASCII: U+E0041 is an invisible
// "A". blackFlag starts the only common legitimate use, subdivision flags
// such as England's (U+1F3F4, tags "gbeng", U+E007F).
const (
	tagFirst  = 0xE0000
	tagLast   = 0xE007F
	blackFlag = 0x1F3F4
)

// isInvisible reports whether r is one of the invisible or
// direction-changing characters Scan looks for.
func isInvisible(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200F, // zero-width space, (non-)joiner, LRM, RLM
		r >= 0x202A && r <= 0x202E, // bidi embeddings and overrides
		r >= 0x2060 && r <= 0x2064, // word joiner, invisible operators
		r >= 0x2066 && r <= 0x2069, // bidi isolates
		r == 0xFEFF,                // zero-width no-break space (BOM)
		r >= tagFirst && r <= tagLast:
		return true
	}
	return false
}

// invisibleNames names the invisible characters for findings.
var invisibleNames = map[rune]string{
	0x200B: "zero width space", 0x200C: "zero width non-joiner", 0x200D: "zero width joiner",
	0x200E: "left-to-right mark", 0x200F: "right-to-left mark",
	0x202A: "left-to-right embedding", 0x202B: "right-to-left embedding", 0x202C: "pop directional formatting",
	0x202D: "left-to-right override", 0x202E: "right-to-left override",
	0x2060: "word joiner", 0x2061: "function application", 0x2062: "invisible times",
	0x2063: "invisible separator", 0x2064: "invisible plus",
	0x2066: "left-to-right isolate", 0x2067: "right-to-left isolate", 0x2068: "first strong isolate",
	0x2069: "pop directional isolate", 0xFEFF: "zero width no-break space",
}

// scanInvisible reports each distinct invisible character once, at its
// first occurrence, and all tag characters together as one finding whose
// excerpt is the text they spell.
func scanInvisible(text string) []Finding {
	var out []Finding
	seen := map[rune]bool{}
	var tags strings.Builder
	tagAt := -1
	inFlag := false
	prev := rune(-1)
	for off, r := range text {
		next, _ := utf8.DecodeRuneInString(text[off+utf8.RuneLen(r):])
		isTag := r >= tagFirst && r <= tagLast
		if isTag && (prev == blackFlag || (inFlag && prev >= tagFirst && prev <= tagLast)) {
			inFlag = r != tagLast
			prev = r
			continue
		}
		inFlag = false
		switch {
		case !isInvisible(r) || allowedInvisible(prev, r, next, off):
		case isTag:
			if tagAt < 0 {
				tagAt = off
			}
			if r >= tagFirst+0x20 && r < tagLast {
				tags.WriteRune(r - tagFirst)
			}
		case !seen[r]:
			seen[r] = true
			out = append(out, Finding{Kind: Invisible, Rule: fmt.Sprintf("U+%04X %s", r, invisibleNames[r]),
				Line: lineOf(text, off), Excerpt: fmt.Sprintf("<U+%04X>", r), offset: off})
		}
		prev = r
	}
	if tagAt >= 0 {
		out = append(out, Finding{Kind: Invisible, Rule: "tag characters", Line: lineOf(text, tagAt),
			Excerpt: excerpt("hidden text: " + tags.String()), offset: tagAt})
	}
	return out
}

// allowedInvisible reports whether an invisible character has an
// ordinary use where it stands: a byte order mark at the very start, or a
// joiner or non-joiner inside an emoji sequence or between letters of a
// script that needs it (Persian, Devanagari, ...).
func allowedInvisible(prev, r, next rune, off int) bool {
	switch r {
	case 0xFEFF:
		return off == 0
	case 0x200C, 0x200D:
		return (isEmojiPart(prev) && isEmojiPart(next)) || (isJoinable(prev) && isJoinable(next))
	}
	return false
}

// isEmojiPart reports whether r can stand next to a joiner in an emoji
// sequence: a symbol, a skin-tone modifier or a variation selector.
func isEmojiPart(r rune) bool {
	return unicode.Is(unicode.So, r) || unicode.Is(unicode.Sk, r) || r == 0xFE0F || r == 0x20E3
}

// isJoinable reports whether r is a non-Latin letter or mark, between
// which joiners shape text.
func isJoinable(r rune) bool {
	return r >= 0x0300 && (unicode.IsLetter(r) || unicode.IsMark(r))
}
