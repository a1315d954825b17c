package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// nonRetryableModelErrors are failure classes a plain retry cannot fix.
var nonRetryableModelErrors = []string{
	string(turnapi.ClassAuth), string(turnapi.ClassBilling), string(turnapi.ClassModelNotFound),
	string(turnapi.ClassBadRequest), string(turnapi.ClassContextOverflow),
}

// storeTimeout and storeRetry serve the short bookkeeping steps; they retry
// until the store is back, so a database outage pauses a turn instead of
// failing it.
const storeTimeout = 30 * time.Second

func storeRetry() *temporal.RetryPolicy {
	return &temporal.RetryPolicy{InitialInterval: 500 * time.Millisecond, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second}
}

// storeOptions serve bookkeeping activities.
func storeOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: storeTimeout, RetryPolicy: storeRetry()})
}

// bookkeep runs a short store activity: a local activity in runs that have
// changeLocalActivities (no server round trip), an activity in older runs.
func bookkeep(ctx workflow.Context, name string, args ...any) workflow.Future {
	if has(ctx, changeLocalActivities) {
		return workflow.ExecuteLocalActivity(localStoreOptions(ctx), name, args...)
	}
	return workflow.ExecuteActivity(storeOptions(ctx), name, args...)
}

// localStoreOptions serve bookkeeping local activities.
func localStoreOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: storeTimeout, RetryPolicy: storeRetry()})
}

// modelOptions serve model calls: heartbeats make a dead worker's call move
// elsewhere quickly; retries are bounded and skip hopeless error classes.
// With a fallback provider left, a rate limit falls back at once and other
// retryable failures are tried fewer times before falling back. The call
// itself ends after in.ModelTimeout without progress; the activity's
// timeout is only the wall-clock bound of a long stream.
func modelOptions(ctx workflow.Context, in TurnInput, hasFallback bool) workflow.Context {
	nonRetryable, attempts := nonRetryableModelErrors, int32(in.ModelAttempts)
	if hasFallback {
		nonRetryable = append(append([]string(nil), nonRetryable...), string(turnapi.ClassRateLimit))
		attempts = min(attempts, 3)
	}
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: modelCallLimit(in.ModelTimeout),
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

// minModelCallLimit is the least wall-clock bound of one model call
// attempt: a stream that keeps sending chunks may take this long.
const minModelCallLimit = time.Hour

// modelCallLimit is the wall-clock bound of one model call attempt whose
// time without progress is bounded by idle. Pure.
func modelCallLimit(idle time.Duration) time.Duration {
	return max(2*idle, minModelCallLimit)
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

// quickToolTimeout bounds a batch of quick tools run as a local activity; a
// batch that takes longer (a read that hangs, a lock held elsewhere) is run
// again as an activity, which heartbeats and can be interrupted.
const quickToolTimeout = time.Minute

// localToolOptions serve batches of quick tools run as local activities:
// one attempt, then the activity path.
func localToolOptions(ctx workflow.Context, in TurnInput) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: min(in.ToolTimeout, quickToolTimeout),
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
}

// compactOptions serve compactions: a summary is one model call, retried a
// few times; a worker that dies mid-way is noticed by heartbeat. The
// summary call ends after in.ModelTimeout without progress (passed in the
// activity's input), so the activity has a model call's wall-clock bound.
func compactOptions(ctx workflow.Context, in TurnInput) workflow.Context {
	return workflow.WithActivityOptions(ctx, compactActivityOptions(in))
}

// compactActivityOptions are the options of a compaction. Pure.
func compactActivityOptions(in TurnInput) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: modelCallLimit(in.ModelTimeout),
		HeartbeatTimeout:    in.HeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
			MaximumAttempts:    3,
		},
	}
}
