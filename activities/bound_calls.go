package activities

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// MaxCallsPerReply is the most tool calls a stored reply keeps: a reply
// asking for more keeps its first MaxCallsPerReply, and its stored text
// ends with a note saying how many were not run (DroppedCallsNote), so the
// model sees its message so and can ask again for the rest. A batch's
// refs, plan and outcomes stay small in history whatever the model sends.
const MaxCallsPerReply = 128

// BoundReply is how a reply's text and calls are stored: the calls bound by
// BoundCalls, and the text followed by DroppedCallsNote when calls were
// left out. Pure.
func BoundReply(content string, calls []models.ToolCall) (string, []models.ToolCall) {
	dropped := len(calls) - MaxCallsPerReply
	calls = BoundCalls(calls)
	if dropped <= 0 {
		return content, calls
	}
	if strings.TrimSpace(content) == "" {
		return DroppedCallsNote(dropped), calls
	}
	return content + "\n\n" + DroppedCallsNote(dropped), calls
}

// DroppedCallsNote tells the model, in its own stored reply, that n of its
// calls were not run. Pure.
func DroppedCallsNote(n int) string {
	return fmt.Sprintf("[%d further tool calls were not run: at most %d calls per reply]", n, MaxCallsPerReply)
}

// refsBudget bounds the JSON encoding of a reply's call refs; what only a
// person reads (clarify questions and choices, terminal commands) is cut
// evenly to fit.
const refsBudget = 160 << 10

// BoundCalls is how a reply's calls are stored: at most MaxCallsPerReply,
// and each id that would not encode as itself in JSON (control characters,
// invalid UTF-8) replaced by a stable digest, so an id costs the same in
// history as in the store. Ids are already unique and short
// (transcript.ToolCallsFromOpenAI). Pure.
func BoundCalls(calls []models.ToolCall) []models.ToolCall {
	if len(calls) > MaxCallsPerReply {
		calls = calls[:MaxCallsPerReply]
	}
	for i := range calls {
		if id := calls[i].ID; !utf8.ValidString(id) || turnapi.JSONLen(id) != len(id) {
			sum := sha256.Sum256([]byte(id))
			calls[i].ID = "call_" + hex.EncodeToString(sum[:12])
		}
	}
	return calls
}

// fitRefs cuts what refs show a person (questions, choices, commands)
// evenly, so that the refs together encode within refsBudget; what the
// loop decides by (ids, names, keys, risks) is never cut. Pure.
func fitRefs(refs []turnapi.ToolCallRef) {
	total := encodedLen(refs)
	if total <= refsBudget {
		return
	}
	display, shown := 0, 0
	for _, r := range refs {
		if d := displayLen(r); d > 0 {
			display += d
			shown++
		}
	}
	if shown == 0 {
		return
	}
	share := max((refsBudget-(total-display))/shown, minShare)
	for i := range refs {
		if displayLen(refs[i]) > share {
			shrinkDisplay(&refs[i], share)
		}
	}
}

// minShare is the least a ref keeps of each text it shows.
const minShare = 96

func displayLen(r turnapi.ToolCallRef) int {
	n := turnapi.JSONLen(r.Question) + turnapi.JSONLen(r.Command)
	for _, c := range r.Choices {
		n += turnapi.JSONLen(c) + 3
	}
	return n
}

// shrinkDisplay cuts a ref's shown texts to about share encoded bytes.
func shrinkDisplay(r *turnapi.ToolCallRef, share int) {
	if r.Command != "" {
		r.Command = turnapi.BoundText(r.Command, max(share, minShare))
	}
	if r.Question == "" && len(r.Choices) == 0 {
		return
	}
	r.Question = turnapi.BoundText(r.Question, max(share/2, minShare))
	if len(r.Choices) == 0 {
		return
	}
	keep := min(len(r.Choices), max(share/2/minShare, 1))
	each := max(share/2/keep, minShare)
	choices := make([]string, 0, keep)
	for _, c := range r.Choices[:keep] {
		choices = append(choices, turnapi.BoundText(c, each))
	}
	r.Choices = choices
}
