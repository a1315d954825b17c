package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// BenchmarkTurnIteration measures the engine's cost of one loop iteration
// (a CallModel and an ExecuteTools activity, each reading and writing the
// SQLite store) with an instant scripted model and an instant tool, on the
// embedded server. Reported as ms/iteration.
func BenchmarkTurnIteration(b *testing.B) {
	const iterations = 50
	model := fakellm.New(fakellm.WithResponder(alwaysTool(1 << 30)))
	defer model.Close()
	rt := startRuntime(b, model)
	ctx := context.Background()
	workdir := b.TempDir()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		res, err := rt.RunTurn(ctx, workflows.TurnInput{SessionID: fmt.Sprintf("bench-%d", i), UserMessage: "go",
			Model: fakellm.DefaultModel, MaxIterations: iterations, Workdir: workdir})
		if err != nil {
			b.Fatal(err)
		}
		if res.APICalls != iterations+1 {
			b.Fatalf("api calls = %d", res.APICalls)
		}
	}
	perIter := time.Since(start) / time.Duration(b.N*(iterations+1))
	b.ReportMetric(float64(perIter.Microseconds())/1000, "ms/iteration")
}
