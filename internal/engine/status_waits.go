package engine

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"

	"github.com/talaria-agent/talaria/internal/textline"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// slowAttempt: an attempt running this long is shown by status as a wait.
const slowAttempt = 10 * time.Second

// ActivityWait is a step of a running turn that waits: a model call or tool
// batch between two attempts, or an attempt that has been running a while.
type ActivityWait struct {
	// What is "model call", "tool batch" or the activity's name.
	What    string `json:"what"`
	Attempt int32  `json:"attempt"`
	// MaxAttempts is 0 when unbounded.
	MaxAttempts int32 `json:"max_attempts,omitempty"`
	// NextAttempt is when the next attempt starts (retrying only).
	NextAttempt *time.Time `json:"next_attempt,omitempty"`
	// RunningFor is how long the current attempt has run (running only).
	RunningFor time.Duration `json:"running_for_ns,omitempty"`
	// LastFailure is the previous attempt's failure, clipped.
	LastFailure string `json:"last_failure,omitempty"`
}

// pendingActivities asks Temporal for the turn's pending activities.
func pendingActivities(ctx context.Context, c client.Client, turnID string) ([]*workflowpb.PendingActivityInfo, error) {
	desc, err := c.DescribeWorkflowExecution(ctx, turnID, "")
	if err != nil {
		return nil, fmt.Errorf("describe turn %s: %w", turnID, err)
	}
	return desc.GetPendingActivities(), nil
}

// describeWaits picks the pending activities worth showing as waits: those
// waiting for their next attempt, and attempts running for slowAttempt or
// more (or after a failure). A tool batch's first attempt running is not a
// wait: status shows it as the tool running now. Pure.
func describeWaits(pending []*workflowpb.PendingActivityInfo, now time.Time) []ActivityWait {
	var out []ActivityWait
	for _, p := range pending {
		w := ActivityWait{What: activityLabel(p.GetActivityType().GetName()), Attempt: p.GetAttempt(), MaxAttempts: p.GetMaximumAttempts()}
		if f := p.GetLastFailure(); f != nil && p.GetAttempt() > 1 {
			w.LastFailure = textline.Visible(textline.Of(f.GetMessage(), 300)) // from a provider: made visible
			w.MaxAttempts = classLimit(w.MaxAttempts, f.GetApplicationFailureInfo().GetType())
		}
		switch p.GetState() {
		case enumspb.PENDING_ACTIVITY_STATE_SCHEDULED:
			next := p.GetNextAttemptScheduleTime()
			if next == nil || !next.AsTime().After(now) {
				continue
			}
			t := next.AsTime()
			w.NextAttempt = &t
		case enumspb.PENDING_ACTIVITY_STATE_STARTED:
			started := p.GetLastStartedTime()
			if started == nil {
				continue
			}
			w.RunningFor = now.Sub(started.AsTime())
			if w.Attempt <= 1 && (w.RunningFor < slowAttempt || p.GetActivityType().GetName() == turnapi.ExecuteToolsName) {
				continue
			}
		default:
			continue
		}
		out = append(out, w)
	}
	return out
}

// classLimit is the most attempts a call may have after failing with the
// given error type: the policy's maximum, or the model failure class's own
// bound (turnapi.ErrorClass.MaxAttempts) when it is lower. Pure.
func classLimit(policy int32, failureType string) int32 {
	own := int32(turnapi.ErrorClass(failureType).MaxAttempts())
	if own > 0 && (policy == 0 || own < policy) {
		return own
	}
	return policy
}

// activityLabel names an activity for people.
func activityLabel(name string) string {
	switch name {
	case turnapi.CallModelName:
		return "model call"
	case turnapi.ExecuteToolsName:
		return "tool batch"
	case turnapi.CompressContextName:
		return "compaction"
	}
	return name
}
