package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/models"
)

func TestNonRetryableRejection(t *testing.T) {
	rejected := fmt.Errorf("persist reply: %w", fmt.Errorf("models: append messages: %w", models.ErrRejected))
	gone := fmt.Errorf("finish turn t1: %w", fmt.Errorf("%w: /h/talaria.db was removed", models.ErrStoreGone))
	tests := []struct {
		name         string
		err          error
		nonRetryable bool
		typ          string // the application error's type when non-retryable
		wraps        error
		says         string // in the message when non-retryable
	}{
		{name: "nil", err: nil},
		{name: "unreachable", err: fmt.Errorf("models: append: %w", models.ErrUnreachable)},
		{name: "other", err: errors.New("boom")},
		{name: "rejected", err: rejected, nonRetryable: true, typ: StoreRejectedType, wraps: models.ErrRejected,
			says: "the database refused to store this turn's content"},
		{name: "rejected in an application error", err: temporal.NewApplicationErrorWithCause("x", "t", rejected),
			nonRetryable: true, typ: StoreRejectedType, wraps: models.ErrRejected},
		{name: "store gone", err: gone, nonRetryable: true, typ: StoreGoneType, wraps: models.ErrStoreGone,
			says: "finish turn t1: the store was removed or replaced: /h/talaria.db was removed (restart this process on a store)"},
		{name: "store gone in an application error", err: temporal.NewApplicationErrorWithCause("x", "t", gone),
			nonRetryable: true, typ: StoreGoneType, wraps: models.ErrStoreGone},
		{name: "session missing", err: fmt.Errorf("call model: %w", fmt.Errorf("%w: s1 (it was deleted)", ErrSessionMissing)),
			nonRetryable: true, typ: SessionMissingType, wraps: ErrSessionMissing, says: "call model: the turn's session is not in the store: s1"},
		{name: "already non-retryable", err: temporal.NewNonRetryableApplicationError("kept", "own", gone),
			nonRetryable: true, typ: "own", wraps: models.ErrStoreGone, says: "kept"},
		{name: "a non-retryable error wrapped", err: fmt.Errorf("outer: %w", temporal.NewNonRetryableApplicationError("kept", "own", gone)),
			nonRetryable: true, typ: StoreGoneType, wraps: models.ErrStoreGone, says: "outer: kept"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NonRetryableRejection(tt.err)
			// Temporal reads retryability from the returned error itself.
			app, _ := got.(*temporal.ApplicationError)
			isNR := app != nil && app.NonRetryable()
			if isNR != tt.nonRetryable {
				t.Fatalf("NonRetryableRejection(%v) = %v; non-retryable %v, want %v", tt.err, got, isNR, tt.nonRetryable)
			}
			if !tt.nonRetryable {
				if got != tt.err {
					t.Errorf("NonRetryableRejection changed %v into %v", tt.err, got)
				}
				return
			}
			if app.Type() != tt.typ {
				t.Errorf("type = %q, want %q", app.Type(), tt.typ)
			}
			if !errors.Is(got, tt.wraps) && !strings.Contains(app.Message(), tt.wraps.Error()) {
				t.Errorf("%v neither wraps nor says %v", got, tt.wraps)
			}
			if !strings.Contains(app.Message(), tt.says) {
				t.Errorf("message = %q, want it to contain %q", app.Message(), tt.says)
			}
			if strings.Contains(app.Message(), "\n") {
				t.Errorf("message is not one line: %q", app.Message())
			}
		})
	}
}

// storeGoneProbe runs the activity "StoreGone" (local or not) under a retry
// policy of up to 5 attempts, as bookkeeping would, and returns its error.
func storeGoneProbe(ctx workflow.Context, local bool) error {
	retry := &temporal.RetryPolicy{InitialInterval: time.Millisecond, BackoffCoefficient: 1, MaximumAttempts: 5}
	if local {
		ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute, RetryPolicy: retry})
		return workflow.ExecuteLocalActivity(ctx, "StoreGone").Get(ctx, nil)
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, RetryPolicy: retry})
	return workflow.ExecuteActivity(ctx, "StoreGone").Get(ctx, nil)
}

// TestRejectionInterceptorStoreGone: through a worker with the interceptor,
// an activity (local or not) whose store was removed is attempted once and
// fails as store_gone; without the interceptor the same activity is
// retried up to its policy.
func TestRejectionInterceptorStoreGone(t *testing.T) {
	for _, local := range []bool{false, true} {
		for _, intercept := range []bool{true, false} {
			t.Run(fmt.Sprintf("local=%v intercepted=%v", local, intercept), func(t *testing.T) {
				var attempts atomic.Int32
				storeGone := func(context.Context) error {
					attempts.Add(1)
					return fmt.Errorf("record turn: %w", fmt.Errorf("%w: /h/talaria.db was removed", models.ErrStoreGone))
				}
				var suite testsuite.WorkflowTestSuite
				suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
				env := suite.NewTestWorkflowEnvironment()
				if intercept {
					env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{RejectionInterceptor()}})
				}
				env.RegisterWorkflow(storeGoneProbe)
				env.RegisterActivityWithOptions(storeGone, activity.RegisterOptions{Name: "StoreGone"})
				env.ExecuteWorkflow(storeGoneProbe, local)
				err := env.GetWorkflowResult(nil)
				if !strings.Contains(fmt.Sprint(err), "was removed") {
					t.Fatalf("workflow error = %v, want the store gone", err)
				}
				want := int32(5)
				if intercept {
					want = 1
					var app *temporal.ApplicationError
					if !errors.As(err, &app) || app.Type() != StoreGoneType || !app.NonRetryable() {
						t.Errorf("workflow error = %v, want a non-retryable %s", err, StoreGoneType)
					}
					if n := strings.Count(err.Error(), "the store was removed"); n != 1 {
						t.Errorf("the workflow error says %d times that the store was removed, want once: %v", n, err)
					}
				}
				if got := attempts.Load(); got != want {
					t.Errorf("attempts = %d, want %d", got, want)
				}
			})
		}
	}
}
