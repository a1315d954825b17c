package approval

import (
	"fmt"
	"strings"
)

// Choice is a human's answer to an approval request.
type Choice string

const (
	// Once runs this one command.
	Once Choice = "once"
	// Session runs the same command (the same grant key) for the rest of
	// the session.
	Session Choice = "session"
	// Always runs the same command (the same grant key) from now on.
	Always Choice = "always"
	// Deny refuses the command.
	Deny Choice = "deny"
)

// ParseChoice reads an answer, ignoring case and surrounding space: the
// four names, their first letters, "yes"/"y" for Once and "no"/"n" for Deny.
func ParseChoice(s string) (Choice, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "once", "o", "yes", "y":
		return Once, nil
	case "session", "s":
		return Session, nil
	case "always", "a":
		return Always, nil
	case "deny", "d", "no", "n":
		return Deny, nil
	}
	return "", fmt.Errorf("approval: unknown choice %q (want once, session, always or deny)", s)
}
