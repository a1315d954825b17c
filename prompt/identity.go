package prompt

import (
	"path/filepath"
	"strings"
)

// SoulFile is the identity file under $TALARIA_HOME.
const SoulFile = "SOUL.md"

// DefaultIdentity is the identity used when there is no SOUL.md.
const DefaultIdentity = `You are Talaria, an autonomous agent that gets work done through tools. ` +
	`Your work is durable: a task may span many steps, restarts and hours, so keep track of where you are and carry it through to the end. ` +
	`Be direct and concise: say what you did and what you found, without filler. ` +
	`Do not claim something works until you have checked it; verify your work by reading results, running tests or inspecting output. ` +
	`When you cannot do something, say so plainly and explain why.`

// identitySection returns SOUL.md (trimmed, capped at ContextCap) or the
// default identity when it is missing or empty.
func identitySection(home string) (string, error) {
	if home == "" {
		return DefaultIdentity, nil
	}
	text, ok, err := readOptional(filepath.Join(home, SoulFile))
	if err != nil {
		return "", err
	}
	text = strings.TrimSpace(text)
	if !ok || text == "" {
		return DefaultIdentity, nil
	}
	return capText(text, ContextCap), nil
}
