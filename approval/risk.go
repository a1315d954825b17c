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
	// constants); session and always approvals are keyed by it.
	Rule string
	// Reason is a short phrase for the user and the model, such as
	// "recursive delete (rm -r)".
	Reason string
}
