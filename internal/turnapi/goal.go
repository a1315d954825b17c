package turnapi

import "time"

// JudgeGoalName asks the model whether a goal is reached.
const JudgeGoalName = "JudgeGoal"

// Verdicts of JudgeGoal.
const (
	VerdictDone     = "done"
	VerdictContinue = "continue"
	VerdictBlocked  = "blocked"
)

// JudgeGoalMarker begins the judge's request, so that it reads as what it is
// (and a scripted model can tell it apart).
const JudgeGoalMarker = "GOAL PROGRESS CHECK"

// JudgeGoalInput names the goal and the conversation working on it.
type JudgeGoalInput struct {
	SessionID string
	Goal      string
	Model     string `json:",omitempty"`
	// IdleTimeout and MaxRetryAfter bound the call as a turn's model call.
	IdleTimeout   time.Duration `json:",omitempty"`
	MaxRetryAfter time.Duration `json:",omitempty"`
}

// JudgeGoalResult is the verdict and its one-line reason.
type JudgeGoalResult struct {
	Verdict string
	Reason  string `json:",omitempty"`
	// Usage is the check's own model call.
	Usage Usage `json:",omitempty"`
}
