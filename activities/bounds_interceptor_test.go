package activities

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

func hugeResult(context.Context) (string, error) { return strings.Repeat("r", 1<<20), nil }
func hugeFailure(context.Context) (string, error) {
	return "", temporal.NewApplicationErrorWithOptions(strings.Repeat("e", 1<<20), "rate_limit",
		temporal.ApplicationErrorOptions{NonRetryable: true})
}
func smallResult(context.Context) (string, error) { return "fine", nil }

// boundsProbe runs one activity, as an activity or as a local activity,
// and returns how it failed.
func boundsProbe(ctx workflow.Context, name string, local bool) (string, error) {
	var out string
	var err error
	if local {
		ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		err = workflow.ExecuteLocalActivity(ctx, name).Get(ctx, &out)
	} else {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		err = workflow.ExecuteActivity(ctx, name).Get(ctx, &out)
	}
	return out, err
}

// TestBoundsInterceptor: through a worker with the interceptor, an activity
// (local or not) whose result is above the bound fails as PayloadTooLarge,
// a 1 MiB failure message arrives cut with its type and retryability, and
// a small result passes unchanged.
func TestBoundsInterceptor(t *testing.T) {
	cases := []struct {
		name     string
		activity string
		wantType string // "" for success
	}{
		{"huge result", "HugeResult", PayloadTooLarge},
		{"huge failure", "HugeFailure", "rate_limit"},
		{"small result", "SmallResult", ""},
	}
	for _, local := range []bool{false, true} {
		for _, c := range cases {
			t.Run(c.name+map[bool]string{true: " (local)", false: ""}[local], func(t *testing.T) {
				var suite testsuite.WorkflowTestSuite
				suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
				env := suite.NewTestWorkflowEnvironment()
				env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{NewBoundsInterceptor()}})
				env.RegisterWorkflow(boundsProbe)
				env.RegisterActivityWithOptions(hugeResult, activity.RegisterOptions{Name: "HugeResult"})
				env.RegisterActivityWithOptions(hugeFailure, activity.RegisterOptions{Name: "HugeFailure"})
				env.RegisterActivityWithOptions(smallResult, activity.RegisterOptions{Name: "SmallResult"})
				env.ExecuteWorkflow(boundsProbe, c.activity, local)
				var out string
				err := env.GetWorkflowResult(&out)
				if c.wantType == "" {
					if err != nil || out != "fine" {
						t.Fatalf("got %q, %v", out, err)
					}
					return
				}
				var appErr *temporal.ApplicationError
				if !errors.As(err, &appErr) {
					t.Fatalf("got %v, want an application error", err)
				}
				if appErr.Type() != c.wantType || !appErr.NonRetryable() || len(appErr.Message()) > turnapi.MaxErrorBytes {
					t.Fatalf("type %q non-retryable %v message %d bytes", appErr.Type(), appErr.NonRetryable(), len(appErr.Message()))
				}
			})
		}
	}
}
