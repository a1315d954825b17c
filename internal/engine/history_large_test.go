package engine

import (
	"context"
	"math"
	"testing"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// TestScaleHistoryPerIterationIgnoresContentSize: content lives in the store,
// not in workflow history, so a turn whose every reply carries 1 MB of text
// and whose every terminal call prints 1 MB adds, per iteration, the same
// history bytes (within 5%) as the same turn with 16 bytes of each. Bytes,
// not time: the assertion holds on any machine.
func TestScaleHistoryPerIterationIgnoresContentSize(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("two turns with megabytes of content")
	}
	const iterations = 5
	model := fakellm.New(fakellm.WithResponder(largeLoop(iterations, 16)))
	defer model.Close()
	rt := startRuntime(t, model)
	perIteration := func(name string, size int) (float64, int) {
		t.Helper()
		model.SetResponder(largeLoop(iterations, size))
		res, err := rt.RunTurn(context.Background(), workflows.TurnInput{SessionID: name, UserMessage: "go",
			Model: fakellm.DefaultModel, MaxIterations: iterations + 5, ContinueEvery: -1, Workdir: t.TempDir()})
		if err != nil || res.APICalls != iterations+1 || !res.Completed {
			t.Fatalf("%s turn: %v %+v", name, err, res)
		}
		sizes, total := iterationSizes(t, rt, res.TurnID)
		if len(sizes) != iterations {
			t.Fatalf("%s turn: %d iterations in history, want %d", name, len(sizes), iterations)
		}
		t.Logf("%s: %v bytes per iteration, %d in all", name, sizes, total)
		return mean(sizes), maxOf(sizes)
	}
	small, smallMax := perIteration("small", 16)
	large, largeMax := perIteration("large", 1<<20)
	if diff := math.Abs(large-small) / small; diff >= 0.05 {
		t.Errorf("history per iteration: %.0f bytes with 1 MB content, %.0f with 16 bytes (%.1f%% apart, want under 5%%)",
			large, small, 100*diff)
	}
	if float64(largeMax) >= 1.05*float64(smallMax) {
		t.Errorf("the largest iteration with 1 MB content adds %d bytes, with 16 bytes %d", largeMax, smallMax)
	}
}
