package fakellm

import (
	"unicode"
	"unicode/utf8"
)

// splitWords splits text into pieces at word boundaries, each piece being
// the whitespace before a word and the word, the way models stream tokens.
// Joining the pieces gives text back.
func splitWords(text string) []string {
	var (
		pieces []string
		start  int
		inWord bool
	)
	for i, r := range text {
		space := unicode.IsSpace(r)
		if space && inWord {
			pieces = append(pieces, text[start:i])
			start = i
		}
		inWord = !space
	}
	if start < len(text) {
		pieces = append(pieces, text[start:])
	}
	return pieces
}

// splitRunes splits text into pieces of at most n runes (n > 0).
func splitRunes(text string, n int) []string {
	var pieces []string
	for len(text) > 0 {
		end, count := 0, 0
		for end < len(text) && count < n {
			_, size := utf8.DecodeRuneInString(text[end:])
			end += size
			count++
		}
		pieces = append(pieces, text[:end])
		text = text[end:]
	}
	return pieces
}

// splitText splits content or reasoning text for streaming.
func splitText(text string, chunkSize int) []string {
	if chunkSize > 0 {
		return splitRunes(text, chunkSize)
	}
	return splitWords(text)
}

// splitArguments splits tool call arguments for streaming: in pieces of
// chunkSize runes when it is positive, else in (up to) three pieces.
func splitArguments(args string, chunkSize int) []string {
	if chunkSize <= 0 {
		n := utf8.RuneCountInString(args)
		chunkSize = max(1, (n+2)/3)
	}
	return splitRunes(args, chunkSize)
}
