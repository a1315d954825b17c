package embedded

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

// activitiesPerWorkflow is how many sequential activities one benchmark
// iteration runs inside a single workflow.
const activitiesPerWorkflow = 20

// BenchmarkActivityRoundTrip measures sequential activity round trips (the
// workflow schedules an activity, a worker runs it, the workflow resumes) on
// an ephemeral server, with the server's default dynamic config and with
// DefaultDynamicConfig, in one run. ns/activity is the figure to compare.
func BenchmarkActivityRoundTrip(b *testing.B) {
	for _, bc := range []struct {
		name    string
		untuned bool
	}{
		{"server-defaults", true},
		{"talaria-tuned", false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := startEphemeral(b, Options{UntunedDynamicConfig: bc.untuned})
			c := dial(b, s)
			startWorker(b, c)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			// Warm up: caches, connections, and the first rate limiter burst.
			runChain(ctx, b, c, "warmup", activitiesPerWorkflow)

			iterations := 0
			start := time.Now()
			for b.Loop() {
				runChain(ctx, b, c, fmt.Sprintf("chain-%d", iterations), activitiesPerWorkflow)
				iterations++
			}
			elapsed := time.Since(start)
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(iterations*activitiesPerWorkflow), "ns/activity")
		})
	}
}

func runChain(ctx context.Context, b *testing.B, c client.Client, id string, n int) {
	b.Helper()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: testTaskQueue}, chainWorkflow, n)
	if err != nil {
		b.Fatalf("start %s: %v", id, err)
	}
	var got int
	if err := run.Get(ctx, &got); err != nil {
		b.Fatalf("%s: %v", id, err)
	}
	if got != n {
		b.Fatalf("%s returned %d, want %d", id, got, n)
	}
}
