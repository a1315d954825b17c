package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/llm"
)

// nonRetryableModelErrors are failure classes a plain retry cannot fix.
var nonRetryableModelErrors = []string{
	string(llm.ClassAuth), string(llm.ClassBilling), string(llm.ClassModelNotFound),
	string(llm.ClassBadRequest), string(llm.ClassContextOverflow),
}

// storeOptions serve the short bookkeeping activities; they retry until the
// store is back, so a database outage pauses a turn instead of failing it.
func storeOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    500 * time.Millisecond,
			BackoffCoefficient: 2,
			MaximumInterval:    30 * time.Second,
		},
	})
}

// modelOptions serve model calls: heartbeats make a dead worker's call move
// elsewhere quickly; retries are bounded and skip hopeless error classes.
// With a fallback provider left, a rate limit falls back at once and other
// retryable failures are tried fewer times before falling back.
func modelOptions(ctx workflow.Context, in TurnInput, hasFallback bool) workflow.Context {
	nonRetryable, attempts := nonRetryableModelErrors, int32(in.ModelAttempts)
	if hasFallback {
		nonRetryable = append(append([]string(nil), nonRetryable...), string(llm.ClassRateLimit))
		attempts = min(attempts, 3)
	}
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: in.ModelTimeout,
		HeartbeatTimeout:    in.HeartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        time.Minute,
			MaximumAttempts:        attempts,
			NonRetryableErrorTypes: nonRetryable,
		},
	})
}

// toolOptions serve tool batches.
func toolOptions(ctx workflow.Context, in TurnInput) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: in.ToolTimeout,
		HeartbeatTimeout:    in.HeartbeatTimeout,
		// An interrupted batch still stores its results (cancelled calls
		// answered) before the turn goes on.
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    30 * time.Second,
			MaximumAttempts:    3,
		},
	})
}
