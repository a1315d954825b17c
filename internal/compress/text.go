package compress

import (
	"fmt"
	"unicode/utf8"
)

// runeLen is the number of characters (code points) in s.
func runeLen(s string) int { return utf8.RuneCountInString(s) }

// prefixRunes returns the first n characters of s (all of s when shorter).
func prefixRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// clip shortens s to at most max characters plus a marker saying how many
// were cut; s is returned unchanged when it fits.
func clip(s string, max int) string {
	n := runeLen(s)
	if n <= max {
		return s
	}
	return fmt.Sprintf("%s …[%d chars clipped]", prefixRunes(s, max), n-max)
}
