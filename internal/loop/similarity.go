package loop

import "unicode/utf8"

// Similarity returns how alike two strings are, from 0 (nothing in common) to
// 1 (equal), with the semantics of Python difflib's SequenceMatcher.ratio()
// when autojunk is off: 2*M/T, where T is the total length of both strings in
// code points and M the number of code points matched by taking the longest
// common block, then recursing on what lies to its left and to its right. Two
// empty strings are alike (1).
//
// Like difflib's ratio, it is not symmetric: when several longest blocks tie,
// the one that comes first in a is taken, so Similarity("tide", "diet") is 0.25
// while Similarity("diet", "tide") is 0.5.
//
// Invalid UTF-8 bytes count as one code point each, distinct from every valid
// code point and from each other byte value.
func Similarity(a, b string) float64 {
	ra, rb := codePoints(a), codePoints(b)
	total := len(ra) + len(rb)
	if total == 0 {
		return 1
	}
	return 2 * float64(matchingChars(ra, rb)) / float64(total)
}

// codePoints decodes s into code points; an invalid byte b becomes -1-b, a
// value no valid code point takes.
func codePoints(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			r = -1 - rune(s[i])
		}
		out = append(out, r)
		i += size
	}
	return out
}

// window is a pair of half-open ranges, a[alo:ahi] and b[blo:bhi].
type window struct{ alo, ahi, blo, bhi int }

// matchingChars counts the code points of the matching blocks difflib would
// find between a and b.
func matchingChars(a, b []rune) int {
	matched := 0
	pending := []window{{0, len(a), 0, len(b)}}
	for len(pending) > 0 {
		w := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		i, j, k := longestMatch(a, b, w)
		if k == 0 {
			continue
		}
		matched += k
		if w.alo < i && w.blo < j {
			pending = append(pending, window{w.alo, i, w.blo, j})
		}
		if i+k < w.ahi && j+k < w.bhi {
			pending = append(pending, window{i + k, w.ahi, j + k, w.bhi})
		}
	}
	return matched
}

// longestMatch finds the longest block a[i:i+k] == b[j:j+k] inside w. Among
// blocks of the greatest length it picks the one ending first in a, then
// first in b, as difflib does; k is 0 when nothing matches.
func longestMatch(a, b []rune, w window) (besti, bestj, bestk int) {
	besti, bestj = w.alo, w.blo
	width := w.bhi - w.blo
	if w.ahi <= w.alo || width <= 0 {
		return besti, bestj, 0
	}
	// prev[x+1] and cur[x+1] hold the length of the common run ending at
	// b[blo+x] and the previous or current code point of a; index 0 stays 0.
	prev := make([]int, width+1)
	cur := make([]int, width+1)
	for i := w.alo; i < w.ahi; i++ {
		for x := 0; x < width; x++ {
			j := w.blo + x
			if a[i] != b[j] {
				cur[x+1] = 0
				continue
			}
			k := prev[x] + 1
			cur[x+1] = k
			if k > bestk {
				besti, bestj, bestk = i-k+1, j-k+1, k
			}
		}
		prev, cur = cur, prev
	}
	return besti, bestj, bestk
}
