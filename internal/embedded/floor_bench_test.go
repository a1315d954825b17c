package embedded

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/polling"
	"github.com/talaria-agent/talaria/internal/proccpu"
)

// floorTaskQueue serves the throughput floor's workflows.
const floorTaskQueue = "floor"

// floorModelDelay and floorIterations give the floor the shape of the
// engine's throughput benchmark: 5 tool iterations and a final answer, each
// model call taking 100 ms.
const (
	floorModelDelay = 100 * time.Millisecond
	floorIterations = 5
)

func floorModel(ctx context.Context) error {
	select {
	case <-time.After(floorModelDelay):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func floorBookkeeping(context.Context) error { return nil }

// floorSession stands for a session coordinator: a bookkeeping step, then
// the turn as a child workflow.
func floorSession(ctx workflow.Context) error {
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	if err := workflow.ExecuteLocalActivity(lctx, floorBookkeeping).Get(ctx, nil); err != nil {
		return err
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{TaskQueue: floorTaskQueue})
	return workflow.ExecuteChildWorkflow(cctx, floorTurn).Get(ctx, nil)
}

// floorTurn stands for a turn: bookkeeping, model calls (activities of
// 100 ms) with a quick tool batch (a local activity) after all but the last,
// bookkeeping.
func floorTurn(ctx workflow.Context) error {
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, HeartbeatTimeout: 10 * time.Second})
	if err := workflow.ExecuteLocalActivity(lctx, floorBookkeeping).Get(ctx, nil); err != nil {
		return err
	}
	for i := 0; i <= floorIterations; i++ {
		if err := workflow.ExecuteActivity(actx, floorModel).Get(ctx, nil); err != nil {
			return err
		}
		if i < floorIterations {
			if err := workflow.ExecuteLocalActivity(lctx, floorBookkeeping).Get(ctx, nil); err != nil {
				return err
			}
		}
	}
	return workflow.ExecuteLocalActivity(lctx, floorBookkeeping).Get(ctx, nil)
}

// BenchmarkThroughputFloor is the server-and-SDK floor of the engine's
// BenchmarkThroughput: 200 sessions at once with the same workflows,
// activities and local activities per session, on a file-backed embedded
// server with DefaultDynamicConfig, but no Talaria code (no store, no model
// client, no events). The ideal is again the 6 model calls of one session:
// 600 ms.
func BenchmarkThroughputFloor(b *testing.B) {
	const sessions = 200
	s, err := Start(context.Background(), Options{DataDir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Stop() })
	c := dial(b, s)
	// Polled as Talaria's workers poll (internal/polling).
	var wo worker.Options
	polling.Tune(&wo)
	w := worker.New(c, floorTaskQueue, wo)
	w.RegisterWorkflow(floorSession)
	w.RegisterWorkflow(floorTurn)
	w.RegisterActivityWithOptions(floorModel, activity.RegisterOptions{Name: "floorModel"})
	w.RegisterActivityWithOptions(floorBookkeeping, activity.RegisterOptions{Name: "floorBookkeeping"})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start, cpu := time.Now(), proccpu.Seconds()
		var wg sync.WaitGroup
		errs := make(chan error, sessions)
		for n := 0; n < sessions; n++ {
			wg.Add(1)
			go func(n int) {
				defer wg.Done()
				run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("floor-%d-%d", i, n), TaskQueue: floorTaskQueue}, floorSession)
				if err == nil {
					err = run.Get(ctx, nil)
				}
				if err != nil {
					errs <- err
				}
			}(n)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		wall := time.Since(start)
		ideal := time.Duration(floorIterations+1) * floorModelDelay
		b.ReportMetric(wall.Seconds(), "s/wall")
		b.ReportMetric(proccpu.Seconds()-cpu, "cpu-s")
		b.ReportMetric(wall.Seconds()/ideal.Seconds(), "x-ideal")
	}
}
