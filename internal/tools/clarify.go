package tools

import (
	"context"
	"encoding/json"
	"errors"

	openai "github.com/sashabaranov/go-openai"
)

// ClarifyName is the name of the clarify tool.
const ClarifyName = "clarify"

const clarifyDescription = `Ask the user a question and wait for the answer before going on. ` +
	`Use it when the task is ambiguous and a wrong guess would waste work, or before an irreversible step the user did not ask for. ` +
	`Give "choices" when the answer is one of a few options. The answer comes back as this call's result; ` +
	`the user may take minutes or days to answer, and the turn waits durably.`

const clarifySchema = `{"type":"object","properties":{` +
	`"question":{"type":"string","description":"The question, complete and self-contained."},` +
	`"choices":{"type":"array","items":{"type":"string"},"description":"Optional answers to choose from."}` +
	`},"required":["question"],"additionalProperties":false}`

// ErrAnsweredByUser: clarify is answered by the user through the engine,
// never run as a function.
var ErrAnsweredByUser = errors.New("clarify is answered by the user, not run")

// ClarifyTool is the clarify tool: the engine intercepts its calls and waits
// for the user's answer; Run itself only reports that.
type ClarifyTool struct{}

// Name implements Tool.
func (ClarifyTool) Name() string { return ClarifyName }

// Idempotent implements Tool: asking again is harmless.
func (ClarifyTool) Idempotent() bool { return true }

// Definition implements Tool.
func (t ClarifyTool) Definition() openai.Tool {
	return functionTool(t.Name(), clarifyDescription, clarifySchema)
}

// Run implements Tool.
func (ClarifyTool) Run(context.Context, Env, json.RawMessage) (string, error) {
	return "", ErrAnsweredByUser
}

// ClarifyArgs are clarify's arguments.
type ClarifyArgs struct {
	Question string   `json:"question"`
	Choices  []string `json:"choices,omitempty"`
}

// ParseClarify reads clarify's arguments with the same strict decoding as
// every tool; false when there is no question or the arguments are invalid.
func ParseClarify(raw string) (ClarifyArgs, bool) {
	a, err := parseArgs(ClarifyName, json.RawMessage(raw))
	if err != nil {
		return ClarifyArgs{}, false
	}
	q, err := a.requiredStr("question")
	if err != nil || q == "" {
		return ClarifyArgs{}, false
	}
	out := ClarifyArgs{Question: q}
	if v, ok := a.value("choices"); ok && json.Unmarshal(v, &out.Choices) != nil {
		return ClarifyArgs{}, false
	}
	return out, true
}

// TerminalCommand reads the command of a terminal call exactly as the
// terminal tool does, so that what approval assesses is what runs; false
// when the arguments are invalid or hold no command.
func TerminalCommand(raw string) (string, bool) {
	t, err := decodeTerminal(json.RawMessage(raw))
	return t.command, err == nil
}

// clarify is a built-in tool.
var _ = builtin(func(Services) Tool { return ClarifyTool{} })

// Meta implements Described.
func (ClarifyTool) Meta() Meta {
	return Meta{
		Toolset:      "planning",
		Guidance:     "When a request is ambiguous and a wrong guess would waste work, ask with clarify instead of guessing.",
		GuidanceRank: 80,
	}
}
