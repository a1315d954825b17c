package approval

import "strings"

// DenialMessage is the tool result the model sees when a command is not
// run. A Blocked command is refused by policy whatever denied says; denied
// reports that a human answered Deny; otherwise the command needed an
// approval that could not be given (no one to ask). Every message tells the
// model not to retry the same command and to choose a safer approach or ask
// the user.
func DenialMessage(a Assessment, denied bool) string {
	reason := a.Reason
	if reason == "" {
		reason = "it needs approval"
	}
	if a.Rule != "" {
		reason += " [rule " + a.Rule + "]"
	}
	var b strings.Builder
	switch {
	case a.Risk == Blocked:
		b.WriteString("BLOCKED: this command was refused and not run: " + reason + ". ")
		b.WriteString("Commands like it are never allowed. Do not retry it or a variant of it; ")
		b.WriteString("choose a safer approach, or ask the user to run it themselves if it is really needed.")
	case denied:
		b.WriteString("DENIED: the user did not approve this command, so it was not run: " + reason + ". ")
		b.WriteString("Do not retry the same command; choose a safer approach or ask the user how to proceed.")
	default:
		b.WriteString("NOT APPROVED: this command needs a human's approval and none was given, so it was not run: " + reason + ". ")
		b.WriteString("Do not retry the same command; choose a safer approach or ask the user how to proceed.")
	}
	return b.String()
}
