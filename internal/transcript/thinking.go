package transcript

import (
	"regexp"
	"strings"
)

// thinkBlock matches reasoning blocks some models inline in their content.
var thinkBlock = regexp.MustCompile(`(?is)<(think|thinking|reasoning)>.*?</(think|thinking|reasoning)>`)

// unclosedThink matches a reasoning block that was opened and never closed.
var unclosedThink = regexp.MustCompile(`(?is)<(think|thinking|reasoning)>.*$`)

// StripThinking removes inline reasoning blocks (closed or left open) and
// surrounding whitespace, leaving the visible answer.
func StripThinking(s string) string {
	return strings.TrimSpace(RemoveThinking(s))
}

// RemoveThinking removes inline reasoning blocks (closed or left open) and
// keeps every other character, for joining parts of one answer.
func RemoveThinking(s string) string {
	s = thinkBlock.ReplaceAllString(s, "")
	return unclosedThink.ReplaceAllString(s, "")
}
