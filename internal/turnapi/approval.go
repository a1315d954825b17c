package turnapi

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ApprovalChoice is a human's answer to an approval request.
type ApprovalChoice string

const (
	// ChoiceOnce runs this one command.
	ChoiceOnce ApprovalChoice = "once"
	// ChoiceSession runs the same command (the same grant key) for the rest of
	// the session.
	ChoiceSession ApprovalChoice = "session"
	// ChoiceAlways runs the same command (the same grant key) from now on.
	ChoiceAlways ApprovalChoice = "always"
	// ChoiceDeny refuses the command.
	ChoiceDeny ApprovalChoice = "deny"
)

// Known reports whether c is one of the four choices. A decision that
// arrives with any other value (a raw signal, not one from talaria approve)
// must be treated as a denial.
func (c ApprovalChoice) Known() bool {
	switch c {
	case ChoiceOnce, ChoiceSession, ChoiceAlways, ChoiceDeny:
		return true
	}
	return false
}

// ParseApprovalChoice reads an answer, ignoring case and surrounding space: the
// four names, their first letters, "yes"/"y" for Once and "no"/"n" for Deny.
func ParseApprovalChoice(s string) (ApprovalChoice, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "once", "o", "yes", "y":
		return ChoiceOnce, nil
	case "session", "s":
		return ChoiceSession, nil
	case "always", "a":
		return ChoiceAlways, nil
	case "deny", "d", "no", "n":
		return ChoiceDeny, nil
	}
	return "", fmt.Errorf("approval: unknown choice %q (want once, session, always or deny)", s)
}

// DenialMessage is the tool result the model sees when a command is not
// run. A Blocked command is refused by policy whatever denied says; denied
// reports that a human answered Deny; otherwise the command needed an
// approval that could not be given (no one to ask). Every message tells the
// model not to retry the same command and to choose a safer approach or ask
// the user.
func DenialMessage(a Assessment, denied bool) string {
	reason := cmp.Or(a.Reason, "it needs approval")
	if a.Rule != "" {
		reason += " [rule " + a.Rule + "]"
	}
	var b strings.Builder
	switch {
	case a.Risk == RiskBlocked:
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

// Grants remembers approvals beyond one call: Session grants live for the
// session, Always grants are kept by the caller in storage. Both are sorted
// sets without duplicates of grant keys (see [Assessment.GrantKey]):
// "cmd:"-prefixed command patterns, or the rule ids older grants held.
type Grants struct {
	Session []string `json:"session,omitempty"`
	Always  []string `json:"always,omitempty"`
}

// Allows reports whether a command may run without asking: Safe always,
// Blocked never, Dangerous when its grant key was granted for the session
// or always. An assessment with a Pattern matches only a grant of exactly
// that pattern, so rule ids granted by older versions do not cover it; one
// without a Pattern (recorded before patterns existed) matches its rule id.
func (g Grants) Allows(a Assessment) bool {
	if a.Risk == RiskSafe {
		return true
	}
	if a.Risk != RiskDangerous {
		return false
	}
	key := a.GrantKey()
	return key != "" && (slices.Contains(g.Session, key) || slices.Contains(g.Always, key))
}

// With returns grants that also hold key (an [Assessment.GrantKey]) for a
// Session or Always choice. The receiver is never modified and the result
// shares no memory with it; Once, Deny, an unknown choice or an empty key
// add nothing.
func (g Grants) With(c ApprovalChoice, key string) Grants {
	out := Grants{Session: normalizeGrants(g.Session, ""), Always: normalizeGrants(g.Always, "")}
	if key == "" {
		return out
	}
	switch c {
	case ChoiceSession:
		out.Session = normalizeGrants(g.Session, key)
	case ChoiceAlways:
		out.Always = normalizeGrants(g.Always, key)
	}
	return out
}

// normalizeGrants returns a sorted copy of ids without duplicates or empty ids,
// plus extra when it is not empty; nil when nothing is left.
func normalizeGrants(ids []string, extra string) []string {
	out := make([]string, 0, len(ids)+1)
	for _, id := range ids {
		if id != "" {
			out = append(out, id)
		}
	}
	if extra != "" {
		out = append(out, extra)
	}
	if len(out) == 0 {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Risk is how dangerous a shell command is.
type Risk int

const (
	// RiskSafe: the command runs without asking.
	RiskSafe Risk = iota
	// RiskDangerous: the command runs only after a human approves it.
	RiskDangerous
	// RiskBlocked: the command is refused without asking and never runs.
	RiskBlocked
)

// String returns "safe", "dangerous" or "blocked" ("risk(N)" for a value
// outside the three).
func (r Risk) String() string {
	switch r {
	case RiskSafe:
		return "safe"
	case RiskDangerous:
		return "dangerous"
	case RiskBlocked:
		return "blocked"
	}
	return "risk(" + strconv.Itoa(int(r)) + ")"
}

// Assessment is the verdict on one shell command. For a Safe command Rule
// and Reason are empty.
type Assessment struct {
	Risk Risk
	// Rule is the stable id of the matched rule (one of the Rule*
	// constants).
	Rule string
	// Reason is a short phrase for the user and the model, such as
	// "recursive delete (rm -r)".
	Reason string
	// Pattern is the normalised command a Dangerous finding is about: the
	// program and its dangerous arguments ("rm -rf ./build"), several
	// findings joined by " ; ". Session and always approvals are keyed by
	// it (see GrantKey). Empty for Safe and Blocked commands and in
	// assessments recorded before patterns existed.
	Pattern string `json:",omitempty"`
}

// GrantPrefix marks a grant that holds a command pattern rather than the
// rule id older grants held.
const GrantPrefix = "cmd:"

// GrantKey is what a Session or Always approval of this assessment
// remembers: "cmd:" and the Pattern, or, for an assessment without one,
// its Rule.
func (a Assessment) GrantKey() string {
	if a.Pattern != "" {
		return GrantPrefix + a.Pattern
	}
	return a.Rule
}
