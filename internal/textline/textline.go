// Package textline makes text from elsewhere (a model, a platform, a
// client, an error) fit on one line of a message: runs of white space and
// control characters become one space, and long text is cut.
package textline

import (
	"strings"
	"unicode"
)

// Of is s on one line, at most max characters (a cut ends with "…"; max
// <= 0: no cut). Invalid UTF-8 becomes U+FFFD. Pure.
func Of(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); max > 0 && len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}
