package engine

import (
	"context"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// TestRecordSessionHandoff records the session coordinator's histories
// into workflows/testdata, for the replay tests: messages delivered by
// update (one starts a turn, two wait in the queue), the run continuing as
// new while the turn runs, and the next run taking the running turn over
// and running the queue; and the history of that turn. Since change
// turn-end-signal the turn reports its end by signal (the files
// *_signals.json, turn_reports_end.json); session_handoff_continued_busy
// and session_handoff_carried_turn are the shape before, when the next run
// waited in AwaitTurn. Since change turn-end-asked (epoch version 2) the
// run that continues as new asks its running turn to report its end
// (*_asked.json, turn_asked_to_report_end.json); the *_signals.json files
// and turn_reports_end.json are the shape before, when every turn
// reported unasked. It runs only when TALARIA_RECORD_HISTORIES is set;
// files that exist are kept (see TestRecordHistories).
func TestRecordSessionHandoff(t *testing.T) {
	t.Parallel()
	mode := recordingMode(t)
	files := []string{"session_handoff_continued_asked.json", "session_handoff_carried_asked.json", "turn_asked_to_report_end.json"}
	for _, f := range files {
		keepRecorded(t, mode, f)
	}
	model := fakellm.New(answerEvery(time.Second))
	defer model.Close()
	rt := startRuntime(t, model)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const session = "rec-handoff"
	runAcrossContinue(ctx, t, rt, model, session)
	runs := coordinatorRuns(ctx, t, rt.Client, session)
	if len(runs) < 2 || !runs[len(runs)-2].carried {
		t.Fatalf("runs %+v: want the second run to take over a running turn", runs)
	}
	// Oldest first: the first run, then the one that took its turn over.
	first, second := runs[len(runs)-1], runs[len(runs)-2]
	recordRun(t, rt, workflows.SessionWorkflowID(session), runIDOf(ctx, t, rt, session, first), files[0])
	recordRun(t, rt, workflows.SessionWorkflowID(session), runIDOf(ctx, t, rt, session, second), files[1])
	recordRun(t, rt, workflows.TurnWorkflowID(session, 1), "", files[2])
}

// runIDOf is the run id of run r (the newest has none in coordinatorRuns:
// it is named by the run after it, which is none).
func runIDOf(ctx context.Context, t *testing.T, rt *Runtime, session string, r coordinatorRun) string {
	t.Helper()
	if r.runID != "" {
		return r.runID
	}
	desc, err := rt.Client.DescribeWorkflowExecution(ctx, workflows.SessionWorkflowID(session), "")
	if err != nil {
		t.Fatal(err)
	}
	return desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
}
