package turnapi

import (
	"fmt"
	"unicode/utf8"
)

// Bounds on the content that workflow history carries. Whatever the model,
// a tool or a file sends, text that reaches an activity input or result, a
// local-activity marker, a failure message or a workflow result is cut to
// these sizes, measured as JSON-encoded bytes (the form Temporal stores):
// the full text stays in the store, and the history only references it.
const (
	// MaxPreviewBytes bounds the final answer a turn's result carries; a
	// longer answer is referenced by its message id (FinishTurnResult.Clipped).
	MaxPreviewBytes = 16 << 10
	// MaxErrorBytes bounds an error message kept in history (a turn's
	// error, an activity failure, a cron delivery error).
	MaxErrorBytes = 4 << 10
	// MaxNameBytes bounds a tool name as the model sent it, in a call ref.
	MaxNameBytes = 256
	// MaxQuestionBytes bounds a clarify call's question in a call ref.
	MaxQuestionBytes = 2000
	// MaxChoices and MaxChoiceBytes bound a clarify call's choices.
	MaxChoices     = 20
	MaxChoiceBytes = 500
	// MaxPayloadBytes is the largest JSON encoding of any single activity
	// input or result this package produces (a 100-call batch included);
	// Temporal refuses payloads over 2 MiB.
	MaxPayloadBytes = 256 << 10
)

// jsonCost is how many bytes encoding/json writes for the rune r taking
// size bytes of the input (an invalid byte becomes U+FFFD, 3 bytes).
func jsonCost(r rune, size int) int {
	switch {
	case r == utf8.RuneError && size <= 1:
		return 3
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
		return 6
	}
	return size
}

// JSONLen is the length of s's JSON string encoding, without the quotes.
// Pure.
func JSONLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		n += jsonCost(r, size)
		i += size
	}
	return n
}

// ClipJSON cuts s at a character boundary so that its JSON encoding takes
// at most max bytes, and says whether it cut. Pure.
func ClipJSON(s string, max int) (string, bool) {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if n += jsonCost(r, size); n > max {
			return s[:i], true
		}
		i += size
	}
	return s, false
}

// BoundText keeps s within max JSON-encoded bytes; a cut s ends with a note
// saying how many bytes were left out. Pure.
func BoundText(s string, max int) string {
	if JSONLen(s) <= max {
		return s
	}
	note := fmt.Sprintf(" … [%d bytes not shown]", len(s))
	head, _ := ClipJSON(s, max-len(note))
	return head + fmt.Sprintf(" … [%d bytes not shown]", len(s)-len(head))
}

// BoundError is an error message fit for history (MaxErrorBytes). Pure.
func BoundError(msg string) string { return BoundText(msg, MaxErrorBytes) }
