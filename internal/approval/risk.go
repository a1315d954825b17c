package approval

import "strconv"

// Risk is how dangerous a shell command is.
type Risk int

const (
	// Safe commands run without asking.
	Safe Risk = iota
	// Dangerous commands run only after a human approves them.
	Dangerous
	// Blocked commands are refused without asking and never run.
	Blocked
)

// String returns "safe", "dangerous" or "blocked" ("risk(N)" for a value
// outside the three).
func (r Risk) String() string {
	switch r {
	case Safe:
		return "safe"
	case Dangerous:
		return "dangerous"
	case Blocked:
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

// grantPrefix marks a grant that holds a command pattern rather than the
// rule id older grants held.
const grantPrefix = "cmd:"

// GrantKey is what a Session or Always approval of this assessment
// remembers: "cmd:" and the Pattern, or, for an assessment without one,
// its Rule.
func (a Assessment) GrantKey() string {
	if a.Pattern != "" {
		return grantPrefix + a.Pattern
	}
	return a.Rule
}
