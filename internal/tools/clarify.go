package tools

import (
	"context"
	"encoding/json"
	"errors"
)

// ClarifyName is the name of the clarify tool.
const ClarifyName = "clarify"

const clarifyDescription = `Ask the user a question and wait for the answer before going on. ` +
	`Use it when the task is ambiguous and a wrong guess would waste work, or before an irreversible step the user did not ask for. ` +
	`Give "choices" when the answer is one of a few options. The answer comes back as this call's result; ` +
	`the user may take minutes or days to answer, and the turn waits durably.`

// ErrAnsweredByUser: clarify is answered by the user through the engine,
// never run as a function.
var ErrAnsweredByUser = errors.New("clarify is answered by the user, not run")

// ClarifyArgs are clarify's arguments.
type ClarifyArgs struct {
	Question string   `json:"question" jsonschema:"The question, complete and self-contained."`
	Choices  []string `json:"choices,omitempty" jsonschema:"Optional answers to choose from."`
}

// clarify is the clarify tool: the engine intercepts its calls and waits
// for the user's answer; its Run only reports that. Asking again is
// harmless.
var clarify = Define(Spec[ClarifyArgs]{
	Name: ClarifyName, Description: clarifyDescription,
	Meta: Meta{
		Toolset:      "planning",
		Guidance:     "When a request is ambiguous and a wrong guess would waste work, ask with clarify instead of guessing.",
		GuidanceRank: 80,
	},
	Quick: true, Idempotent: true,
	Run: func(context.Context, Env, ClarifyArgs) (string, error) { return "", ErrAnsweredByUser },
}).(*typed[ClarifyArgs])

// Clarify is the clarify tool.
func Clarify() Tool { return clarify }

var _ = builtin(func(Services) Tool { return clarify })

// ParseClarify reads clarify's arguments with the same strict decoding as
// every tool; false when there is no question or the arguments are invalid.
func ParseClarify(raw string) (ClarifyArgs, bool) {
	a, err := clarify.decode(json.RawMessage(raw))
	if err != nil || a.Question == "" {
		return ClarifyArgs{}, false
	}
	return a, true
}

// TerminalCommand reads the command of a terminal call exactly as the
// terminal tool does, so that what approval assesses is what runs; false
// when the arguments are invalid or hold no command.
func TerminalCommand(raw string) (string, bool) {
	t, err := decodeTerminal(json.RawMessage(raw))
	if err != nil {
		return "", false
	}
	return t.Command, true
}
