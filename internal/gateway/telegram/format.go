package telegram

import (
	"html"
	"strings"
	"unicode/utf8"
)

// parseMode is how the bot's messages are parsed.
const parseMode = "HTML"

// limit is Telegram's message length, in characters.
const limit = 4096

// parts renders Markdown text for Telegram and splits it within limit:
// escaped plain text, split at paragraph, line or word boundaries.
func parts(text string) []string {
	text = strings.TrimSpace(text)
	if text == "" {
		text = "(no answer)"
	}
	var out []string
	for len(text) > 0 {
		cut := splitAt(text, limit-200) // room for entities
		out = append(out, html.EscapeString(strings.TrimSpace(text[:cut])))
		text = strings.TrimSpace(text[cut:])
	}
	return out
}

// splitAt is where to cut text so that the first piece holds at most max
// characters: the last paragraph, line or word break before it, else
// max characters exactly (at a character boundary). Pure.
func splitAt(text string, max int) int {
	if utf8.RuneCountInString(text) <= max {
		return len(text)
	}
	end := 0
	for i := 0; i < max; i++ {
		_, size := utf8.DecodeRuneInString(text[end:])
		end += size
	}
	for _, sep := range []string{"\n\n", "\n", " "} {
		if i := strings.LastIndex(text[:end], sep); i > end/2 {
			return i + len(sep)
		}
	}
	return end
}
