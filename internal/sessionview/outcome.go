package sessionview

import (
	"encoding/json"
	"slices"
	"strings"
)

// Outcomes of a tool call, as its stored result tells them.
const (
	// OutcomeDone: the call ran and returned.
	OutcomeDone = "done"
	// OutcomeFailed: the call ran, or was tried, and failed.
	OutcomeFailed = "failed"
	// OutcomeStopped: an interrupt (or the batch's time running out)
	// stopped the call while it ran, or before it started.
	OutcomeStopped = "stopped"
	// OutcomeNotRun: the call was refused (blocked, denied, not approved)
	// or skipped without running.
	OutcomeNotRun = "not_run"
	// OutcomeUnknown: an earlier attempt of the call stopped without
	// recording a result; it may or may not have taken effect.
	OutcomeUnknown = "unknown"
)

// The openings of the results the engine writes for calls that did not
// run to their end (see activities.ExplainCancelled, UnansweredCall and
// OutcomeUnknown, turnapi.DenialMessage, the Skipped notes): a stored
// result keeps no other trace of how its call ended.
var (
	stoppedOpenings = []string{"Error: interrupted: ", "Error: cancelled: "}
	notRunOpenings  = []string{"BLOCKED: ", "DENIED: ", "NOT APPROVED: ", "Skipped: "}
	// guardrailWarning begins what a guardrail adds after a result.
	guardrailWarning = "\n\n[guardrail warning] "
)

// ToolOutcome is how the call a stored tool result answers ended: stopped,
// not run, unknown, failed (an "Error: ..." result, or a tool's {"error":
// ...}) or done. Pure.
func ToolOutcome(content string) string {
	switch {
	case hasOpening(content, stoppedOpenings):
		return OutcomeStopped
	case hasOpening(content, notRunOpenings):
		return OutcomeNotRun
	case strings.HasPrefix(content, "Outcome unknown: "):
		return OutcomeUnknown
	case strings.HasPrefix(content, "Error: ") || isErrorObject(content):
		return OutcomeFailed
	}
	return OutcomeDone
}

func hasOpening(s string, openings []string) bool {
	return slices.ContainsFunc(openings, func(o string) bool { return strings.HasPrefix(s, o) })
}

// isErrorObject says whether s is a tool's error result: a JSON object
// whose only member is "error", a string (a guardrail's warning may
// follow it).
func isErrorObject(s string) bool {
	s, _, _ = strings.Cut(s, guardrailWarning)
	if !strings.HasPrefix(s, `{"error":`) {
		return false
	}
	var v map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &v) != nil || len(v) != 1 {
		return false
	}
	var msg string
	return json.Unmarshal(v["error"], &msg) == nil
}
