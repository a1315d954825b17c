// Package textline makes text from elsewhere (a model, a platform, a
// client, an error) fit on one line of a message: runs of white space and
// control characters become one space, and long text is cut.
package textline

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/talaria-agent/talaria/internal/injection"
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

// Visible is text from the model made safe to print on a terminal before a
// person decides on it: control characters (escape sequences that could
// hide or rewrite the rest of the line) become \xNN or \u00NN and invisible
// Unicode becomes <U+XXXX>, so what is printed is all that would run.
func Visible(s string) string {
	var b strings.Builder
	for _, r := range injection.Visible(strings.ToValidUTF8(s, "\uFFFD")) {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
