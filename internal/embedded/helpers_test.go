package embedded

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

const (
	testTaskQueue = "embedded-test"
	signalName    = "go"
)

func echoActivity(_ context.Context, s string) (string, error) { return s + "!", nil }

func countActivity(_ context.Context, i int) (int, error) { return i + 1, nil }

func activityOpts(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
}

// echoWorkflow runs one activity.
func echoWorkflow(ctx workflow.Context, s string) (string, error) {
	var out string
	err := workflow.ExecuteActivity(activityOpts(ctx), echoActivity, s).Get(ctx, &out)
	return out, err
}

// chainWorkflow runs n activities one after another and returns n.
func chainWorkflow(ctx workflow.Context, n int) (int, error) {
	ctx = activityOpts(ctx)
	v := 0
	for range n {
		if err := workflow.ExecuteActivity(ctx, countActivity, v).Get(ctx, &v); err != nil {
			return v, err
		}
	}
	return v, nil
}

// signalWorkflow waits for one signal and returns its payload.
func signalWorkflow(ctx workflow.Context) (string, error) {
	var v string
	workflow.GetSignalChannel(ctx, signalName).Receive(ctx, &v)
	return "got " + v, nil
}

// dial connects a client to s, closed at test cleanup, as Talaria's engine
// connects to its embedded server: without gRPC compression on loopback.
func dial(tb testing.TB, s *Server) client.Client {
	tb.Helper()
	c, err := client.Dial(client.Options{HostPort: s.HostPort(), Namespace: s.Namespace(), Logger: quietSDKLogger(),
		ConnectionOptions: client.ConnectionOptions{TLS: s.ClientTLS(), GrpcCompression: &client.GrpcCompressionNone{}}})
	if err != nil {
		tb.Fatalf("dial %s: %v", s.HostPort(), err)
	}
	tb.Cleanup(c.Close)
	return c
}

// startWorker runs a worker with the test workflows and activities; it is
// stopped at test cleanup (Stop is idempotent, so tests may stop it early).
func startWorker(tb testing.TB, c client.Client) worker.Worker {
	tb.Helper()
	w := worker.New(c, testTaskQueue, worker.Options{})
	w.RegisterWorkflow(echoWorkflow)
	w.RegisterWorkflow(chainWorkflow)
	w.RegisterWorkflow(signalWorkflow)
	w.RegisterActivityWithOptions(echoActivity, activity.RegisterOptions{Name: "echoActivity"})
	w.RegisterActivityWithOptions(countActivity, activity.RegisterOptions{Name: "countActivity"})
	if err := w.Start(); err != nil {
		tb.Fatalf("start worker: %v", err)
	}
	tb.Cleanup(w.Stop)
	return w
}

func startEphemeral(tb testing.TB, opts Options) *Server {
	tb.Helper()
	opts.Ephemeral = true
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, opts)
	if err != nil {
		tb.Fatalf("start ephemeral server: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Errorf("stop: %v", err)
		}
	})
	return s
}

func runEcho(ctx context.Context, c client.Client, id, in string) (string, error) {
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: testTaskQueue}, echoWorkflow, in)
	if err != nil {
		return "", fmt.Errorf("start %s: %w", id, err)
	}
	var out string
	if err := run.Get(ctx, &out); err != nil {
		return "", fmt.Errorf("result of %s: %w", id, err)
	}
	return out, nil
}
