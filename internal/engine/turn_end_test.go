package engine

import (
	"context"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// TestCarriedTurnReportsItsEnd: a coordinator that continues as new while
// its turn runs learns of that turn's end from the turn's signal, in the
// run that took it over: no run waits in an activity (AwaitTurn), and the
// messages queued behind the turn run.
func TestCarriedTurnReportsItsEnd(t *testing.T) {
	t.Parallel()
	model := fakellm.New(answerEvery(time.Second))
	defer model.Close()
	rt := startRuntime(t, model)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const session = "reports-end"
	// A small limit makes the first run continue as new while its turn runs.
	startCoordinator(ctx, t, rt.Client, session, 20)
	done := make(chan error, 3)
	send := func(text string) {
		go func() {
			in := workflows.TurnInput{SessionID: session, UserMessage: text, Model: fakellm.DefaultModel, Workdir: t.TempDir()}
			res, err := rt.RunTurn(ctx, in)
			if err == nil && !res.Completed {
				t.Errorf("%s: turn %s did not complete: %+v", text, res.TurnID, res)
			}
			done <- err
		}()
	}
	send("first")
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	send("second")
	send("third")
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	runs := coordinatorRuns(ctx, t, rt.Client, session)
	carried := false
	for i, r := range runs {
		t.Logf("run %d: %+v", len(runs)-i, r)
		if r.awaited {
			t.Errorf("run %d waited for a turn in an activity", len(runs)-i)
		}
		if r.carried {
			carried = true
			if !r.ended {
				t.Errorf("run %d took a turn over and was not told its end", len(runs)-i)
			}
		}
	}
	if !carried {
		t.Fatal("no run took a running turn over")
	}
}
