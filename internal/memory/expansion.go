package memory

import (
	"strings"
	"unicode"

	"github.com/talaria-agent/talaria/internal/transcript"
)

// Query expansion: before the built-in recall searches, the auxiliary
// model (config auxiliary) writes a few questions like the turn's message,
// in other words, and their words are searched too. It is asked only when
// one is configured and the provider searches with expansions
// (ExpansionSearcher); it runs within the prefetch budget.

// ExpansionSearcher is a provider that searches with a query's
// Expansions (the built-in recall); the others are never asked for them.
type ExpansionSearcher interface {
	SearchesExpansions() bool
}

// SearchesExpansions: the built-in recall searches the expansions' words.
func (r *BuiltinRecall) SearchesExpansions() bool { return true }

// Bounds of an expansion.
const (
	// MaxExpansions is how many questions are kept.
	MaxExpansions = 3
	// maxExpansionBytes bounds one question.
	maxExpansionBytes = 200
	// ExpansionMaxTokens bounds the auxiliary model's reply.
	ExpansionMaxTokens = 150
	// maxExpansionInput bounds the message the auxiliary model reads.
	maxExpansionInput = 2000
)

// ExpansionPrompt is what the auxiliary model is asked, before the
// message.
const ExpansionPrompt = "Write three short questions a person might ask that mean the same as the message below " +
	"or that it leads to next, using other words (synonyms, the names of the tools and topics involved). " +
	"One question per line, nothing else.\n\nMessage:\n"

// ExpansionRequest is the text asking for the expansions of message. Pure.
func ExpansionRequest(message string) string {
	return ExpansionPrompt + cutText(strings.TrimSpace(message), maxExpansionInput)
}

// ParseExpansions is the questions of the auxiliary model's reply: one per
// line, without thinking, list marks or quotes; blank lines, a preamble
// ending in ':', repeats and the message itself left out; each at most maxExpansionBytes; at most
// MaxExpansions. Pure.
func ParseExpansions(reply, message string) []string {
	var out []string
	seen := map[string]bool{strings.ToLower(strings.TrimSpace(message)): true}
	for _, line := range strings.Split(transcript.RemoveThinking(reply), "\n") {
		q := strings.TrimSpace(strings.TrimLeftFunc(strings.TrimSpace(line), func(r rune) bool {
			return unicode.IsDigit(r) || r == '-' || r == '*' || r == '•' || r == '.' || r == ')' || unicode.IsSpace(r)
		}))
		q = strings.TrimSpace(strings.Trim(q, "\"'`“”"))
		if q == "" || strings.HasSuffix(q, ":") || seen[strings.ToLower(q)] {
			continue
		}
		seen[strings.ToLower(q)] = true
		if out = append(out, cutText(q, maxExpansionBytes)); len(out) == MaxExpansions {
			break
		}
	}
	return out
}
