package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/workflows"
)

// TestCarriedTurnReportsItsEnd: a coordinator that continues as new while
// its turn runs learns of that turn's end from the turn's signal, in the
// run that holds it then: the run that started the turn asked it to report
// its end before it continued (SignalReportEnd), no run waits in an
// activity (AwaitTurn), a run that took a turn over is either told its end
// or hands the turn on to the next run, and the messages queued behind the
// turn run.
func TestCarriedTurnReportsItsEnd(t *testing.T) {
	t.Parallel()
	model := fakellm.New(answerEvery(time.Second))
	defer model.Close()
	rt := startRuntime(t, model)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const session = "reports-end"
	runAcrossContinue(ctx, t, rt, model, session)
	runs := coordinatorRuns(ctx, t, rt.Client, session)
	carried := false
	for i, r := range runs {
		t.Logf("run %d: %+v", len(runs)-i, r)
		if r.awaited {
			t.Errorf("run %d waited for a turn in an activity", len(runs)-i)
		}
		if r.carried {
			carried = true
			if prev := runs[i+1]; prev.took != r.took && !(slices.Contains(prev.started, r.took) && slices.Contains(prev.asked, r.took)) {
				t.Errorf("run %d took %s over from a run that neither took it over nor started and asked it (%+v)", len(runs)-i, r.took, prev)
			}
			handedOn := r.next && i > 0 && runs[i-1].carried
			if !r.ended && !handedOn {
				t.Errorf("run %d took a turn over, was not told its end and did not hand the turn on", len(runs)-i)
			}
		}
	}
	if !carried {
		t.Fatal("no run took a running turn over")
	}
}

// runAcrossContinue sends three messages to session: the first starts a
// turn, the other two wait in the queue, and the coordinator, started with
// a small limit, continues as new while the turn runs. Each turn must
// complete.
func runAcrossContinue(ctx context.Context, t *testing.T, rt *Runtime, model *fakellm.Server, session string) {
	t.Helper()
	startCoordinator(ctx, t, rt.Client, session, 17)
	done := make(chan error, 3)
	send := func(text string) {
		go func() {
			in := workflows.TurnInput{SessionID: session, UserMessage: text, Model: fakellm.DefaultModel, Workdir: t.TempDir()}
			res, err := rt.RunTurn(ctx, in)
			if err == nil && !res.Completed {
				err = fmt.Errorf("%s: turn %s did not complete: %+v", text, res.TurnID, res)
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
}

// TestGoalTurnsRunUnderTheCoordinator: a goal's turns are the session
// coordinator's children, started from the messages the goal sends it,
// like any other message's; the goal learns each turn's end by signal.
func TestGoalTurnsRunUnderTheCoordinator(t *testing.T) {
	t.Parallel()
	checks := 0
	var mu sync.Mutex
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		if strings.HasPrefix(last.Content, turnapi.JudgeGoalMarker) {
			mu.Lock()
			defer mu.Unlock()
			checks++
			verdict := "continue"
			if checks == 2 {
				verdict = "done"
			}
			return fakellm.TextStep(`{"verdict": "` + verdict + `", "reason": "check"}`)
		}
		return fakellm.TextStep("worked on it")
	}))
	defer model.Close()
	rt := startRuntime(t, model)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const session = "goal-under-coordinator"
	err := rt.StartGoal(ctx, workflows.GoalInput{SessionID: session, Goal: "finish it",
		Turn: workflows.TurnInput{Model: fakellm.DefaultModel, Workdir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := rt.WaitGoal(ctx, session, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != workflows.GoalDone || res.TurnCount != 2 {
		t.Fatalf("goal %+v; want done after two turns", res)
	}
	children := map[string]bool{}
	for _, r := range coordinatorRuns(ctx, t, rt.Client, session) {
		iter := rt.Client.GetWorkflowHistory(ctx, workflows.SessionWorkflowID(session), r.runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for iter.HasNext() {
			ev, err := iter.Next()
			if err != nil {
				t.Fatal(err)
			}
			if a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
				children[a.GetWorkflowId()] = true
			}
		}
	}
	for _, turn := range res.Turns {
		if !children[turn.TurnID] {
			t.Errorf("goal turn %s is not a child of the session's coordinator (its children: %v)", turn.TurnID, children)
		}
	}
	// With TALARIA_RECORD_HISTORIES set, the goal's history is kept for the
	// replay tests (an existing file is kept: it is what older code ran).
	const file = "goal_via_session.json"
	if mode := os.Getenv("TALARIA_RECORD_HISTORIES"); mode != "" && !t.Failed() {
		if _, err := os.Stat(filepath.Join("..", "..", "workflows", "testdata", file)); err != nil || mode == "overwrite" {
			recordRun(t, rt, workflows.GoalWorkflowID(session), "", file)
		}
	}
}
