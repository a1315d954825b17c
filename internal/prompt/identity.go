package prompt

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/talaria-agent/talaria/internal/injection"
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
// default identity when it is missing or empty. A SOUL.md that exists but
// cannot be read (a directory, a FIFO, no permission) gives the default
// identity followed by one line saying so, and is returned as unread; one
// that looks like a prompt injection (injection.ScanInstructions) gives
// the default identity and a line saying so, and is returned as refused.
func identitySection(home string) (string, []Unread, []Refusal) {
	if home == "" {
		return DefaultIdentity, nil, nil
	}
	path := filepath.Join(home, SoulFile)
	text, ok, err := readOptional(path)
	if err != nil {
		return DefaultIdentity + "\n\n" + unreadNote(SoulFile), []Unread{{Path: path, Err: fmt.Errorf("identity: %w", err)}}, nil
	}
	text = strings.TrimSpace(text)
	if !ok || text == "" {
		return DefaultIdentity, nil, nil
	}
	if findings := injection.ScanInstructions(text); len(findings) > 0 {
		return DefaultIdentity + "\n\n" + refusedNote(SoulFile, findings), nil, []Refusal{{Path: path, Findings: findings}}
	}
	return capText(text, ContextCap), nil, nil
}
