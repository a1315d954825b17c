package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// TestRecordHistories records real turn histories into
// workflows/testdata for the replay tests. It runs only when
// TALARIA_RECORD_HISTORIES is set, after a change of workflow code:
//
//	TALARIA_RECORD_HISTORIES=1 go test ./internal/engine -run TestRecordHistories
//
// Files that exist are kept: they are histories of turns that older code
// ran, and the replay tests prove the current code still replays them. A
// change adds a case with a new file for its new path.
// TALARIA_RECORD_HISTORIES=overwrite re-records every file.
func TestRecordHistories(t *testing.T) {
	t.Parallel()
	mode := recordingMode(t)
	cases := []struct {
		file          string
		steps         []fakellm.Step
		maxIterations int
		// during runs while the turn runs (e.g. approves a command).
		during func(t *testing.T, rt *Runtime)
		// session: record the session coordinator's history too.
		session bool
		// continueEvery: the turn continues as new after this many
		// iterations (0: the default); the last run is recorded.
		continueEvery int
	}{
		{"turn_write_read_text.json", []fakellm.Step{
			fakellm.ToolStep(fakellm.ToolCall{Name: "write_file", Arguments: `{"path":"a.txt","content":"hi"}`}),
			fakellm.ToolStep(fakellm.ToolCall{Name: "read_file", Arguments: `{"path":"a.txt"}`}),
			fakellm.TextStep("done"),
		}, 0, nil, false, 0},
		{"turn_max_iterations.json", []fakellm.Step{
			fakellm.ToolStep(fakellm.ToolCall{Name: "todo", Arguments: `{}`}),
			fakellm.ToolStep(fakellm.ToolCall{Name: "todo", Arguments: `{}`}),
			fakellm.TextStep("summary"),
		}, 2, nil, false, 0},
		{"turn_empty_then_text.json", []fakellm.Step{
			fakellm.TextStep(""),
			fakellm.TextStep("<think>hm</think>"),
			fakellm.TextStep("finally"),
		}, 0, nil, false, 0},
		{"turn_approval_and_steer.json", []fakellm.Step{
			fakellm.ToolStep(fakellm.ToolCall{Name: "terminal", Arguments: `{"command":"rm -r nothing-here || true"}`}),
			fakellm.TextStep("done"),
		}, 0, approveAndSteer, true, 0},
		// Since change local-activities: quick batches and bookkeeping run as local activities.
		{"turn_local_activities.json", []fakellm.Step{
			fakellm.ToolStep(fakellm.ToolCall{Name: "write_file", Arguments: `{"path":"a.txt","content":"hi"}`}),
			fakellm.ToolStep(fakellm.ToolCall{Name: "read_file", Arguments: `{"path":"a.txt"}`},
				fakellm.ToolCall{Name: "terminal", Arguments: `{"command":"cat a.txt"}`}),
			fakellm.TextStep("done"),
		}, 0, nil, true, 0},
		// A run continued from an earlier one (TurnInput.Resume set).
		{"turn_continued_run.json", []fakellm.Step{
			fakellm.ToolStep(fakellm.ToolCall{Name: "todo", Arguments: `{}`}),
			fakellm.ToolStep(fakellm.ToolCall{Name: "todo", Arguments: `{"todos":[{"id":"1","content":"x","status":"pending"}]}`}),
			fakellm.TextStep("done"),
		}, 0, nil, false, 2},
		// Since change resume-policy: a continued run asks for the serving
		// worker's approval mode and the stored grants (TurnPolicy).
		{"turn_continued_run_policy.json", []fakellm.Step{
			fakellm.ToolStep(fakellm.ToolCall{Name: "todo", Arguments: `{}`}),
			fakellm.ToolStep(fakellm.ToolCall{Name: "todo", Arguments: `{"todos":[{"id":"1","content":"x","status":"pending"}]}`}),
			fakellm.TextStep("done"),
		}, 0, nil, false, 2},
		// Since change answer-calls: a batch that ends with an error (here
		// interrupted) is followed by AnswerCalls. The old shape, without
		// it, is testdata/turn_interrupted_batch_before_answer_calls.json
		// (the same steps) and turn_failed_batch_before_answer_calls.json
		// (a batch whose activity fails on every attempt), recorded by the
		// code before the change (52577f5); they have no case here, as the
		// current code takes the new path.
		{"turn_interrupted_batch_answered.json", []fakellm.Step{
			fakellm.ToolStep(fakellm.ToolCall{Name: "terminal", Arguments: `{"command":"sleep 30"}`},
				fakellm.ToolCall{Name: "read_file", Arguments: `{"path":"."}`}),
		}, 0, interruptDuringTools, false, 0},
		// Since change invalid-args-feedback: arguments ending mid-JSON in a
		// finished reply are re-asked, then answered with an error. The
		// same steps before the change (re-asked with more room, then
		// truncated) are testdata/turn_broken_args_before_feedback.json,
		// recorded by the code before it (52577f5).
		// testdata/turn_broken_args_truncated.json has the same old shape
		// but was recorded while the change was not yet complete (its input
		// already carries later fields). Neither has a case here, as the
		// current code takes the new path.
		{"turn_broken_args_fed_back.json", []fakellm.Step{
			fakellm.ToolStep(fakellm.ToolCall{Name: "write_file", Arguments: `{"path":"a.txt","content":"hi`}),
			fakellm.ToolStep(fakellm.ToolCall{Name: "write_file", Arguments: `{"path":"a.txt","content":"hi`}),
			fakellm.ToolStep(fakellm.ToolCall{Name: "write_file", Arguments: `{"path":"a.txt","content":"hi`}),
			fakellm.ToolStep(fakellm.ToolCall{Name: "write_file", Arguments: `{"path":"a.txt","content":"hi`}),
			fakellm.TextStep("could not write it"),
		}, 0, nil, false, 0},
		// A turn that names no model: BeginTurn reports the worker's
		// model settings (BeginTurnResult.Worker) and each reply the model
		// that answered (CallModelResult.Model). No command changed;
		// the results carry two more fields.
		{workerModelFile, []fakellm.Step{
			fakellm.ToolStep(fakellm.ToolCall{Name: "todo", Arguments: `{}`}),
			fakellm.TextStep("done"),
		}, 0, nil, false, 0},
		// Since change turn-visibility: the turn starts with a summary,
		// details and TalariaSessionId, and records TalariaStopReason
		// before FinishTurn. (The coordinator's side, the child's options,
		// is recorded by cron_run_turn_visibility.json.)
		{"turn_visibility.json", []fakellm.Step{
			fakellm.ToolStep(fakellm.ToolCall{Name: "todo", Arguments: `{}`}),
			fakellm.TextStep("done"),
		}, 0, nil, false, 0},
		// The same with the session coordinator's history (change
		// turn-visibility there: the child's options, the recorded side
		// effect saying the worker has the search attributes).
		{"turn_visibility_session.json", []fakellm.Step{
			fakellm.TextStep("done"),
		}, 0, nil, true, 0},
		// Since change human-events: a wait on a person is bracketed by
		// RecordEvent (approval, approval_decided; question, answered).
		// turn_approval_and_steer.json is the approval's shape before it.
		{"turn_approval_events.json", []fakellm.Step{
			fakellm.ToolStep(fakellm.ToolCall{Name: "terminal", Arguments: `{"command":"rm -r nothing-here || true"}`}),
			fakellm.TextStep("done"),
		}, 0, approveOnce, false, 0},
		{"turn_clarify_events.json", []fakellm.Step{
			fakellm.ToolStep(fakellm.ToolCall{Name: "clarify", Arguments: `{"question":"Which colour?","choices":["red","blue"]}`}),
			fakellm.TextStep("done"),
		}, 0, answerQuestion, false, 0},
		// Since change epoch: the turn and its coordinator record one
		// version marker each (epoch) instead of one per change. Every
		// file above has the shape before it.
		{"turn_epoch.json", []fakellm.Step{
			fakellm.ToolStep(fakellm.ToolCall{Name: "todo", Arguments: `{}`}),
			fakellm.ToolStep(fakellm.ToolCall{Name: "terminal", Arguments: `{"command":"rm -r nothing-here || true"}`}),
			fakellm.TextStep("done"),
		}, 0, approveOnce, true, 0},
		// Since change epoch version 2 (turn-end-asked): the turn does
		// not signal its end unasked; its coordinator gets the child's
		// result.
		{"turn_end_asked.json", []fakellm.Step{
			fakellm.ToolStep(fakellm.ToolCall{Name: "todo", Arguments: `{}`}),
			fakellm.TextStep("done"),
		}, 0, nil, true, 0},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			keepRecorded(t, mode, c.file)
			model := fakellm.New(fakellm.WithSteps(c.steps...))
			defer model.Close()
			rt := startRuntime(t, model)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if c.during != nil {
				go c.during(t, rt)
			}
			in := workflows.TurnInput{SessionID: "rec", UserMessage: "go",
				Model: fakellm.DefaultModel, MaxIterations: c.maxIterations, ContinueEvery: c.continueEvery, Workdir: t.TempDir()}
			if c.file == workerModelFile {
				in.Model = "" // the worker's
			}
			res, err := rt.RunTurn(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			record(t, rt, res.TurnID, c.file)
			if c.session {
				record(t, rt, workflows.SessionWorkflowID("rec"), "session_"+c.file)
			}
			t.Logf("recorded %s (%s)", c.file, res.TurnExitReason)
		})
	}
}

// workerModelFile is the history of a turn that names no model.
const workerModelFile = "turn_worker_model.json"

// approveAndSteer approves the pending command and steers the turn.
func approveAndSteer(t *testing.T, rt *Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		p, err := rt.Running(ctx, "rec")
		if err == nil && p.PendingApproval != nil {
			_ = rt.Signal(ctx, p.TurnID, workflows.SignalSteer, "be quick")
			_ = rt.Signal(ctx, p.TurnID, workflows.SignalApproval, workflows.ApprovalDecision{Choice: "once"})
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// approveOnce approves the pending command once.
func approveOnce(t *testing.T, rt *Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		if p, err := rt.Running(ctx, "rec"); err == nil && p.PendingApproval != nil {
			_ = rt.Signal(ctx, p.TurnID, workflows.SignalApproval, workflows.ApprovalDecision{Choice: "once"})
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// answerQuestion answers the pending clarify question.
func answerQuestion(t *testing.T, rt *Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		if p, err := rt.Running(ctx, "rec"); err == nil && p.PendingQuestion != nil {
			_ = rt.Signal(ctx, p.TurnID, workflows.SignalAnswer, workflows.Answer{Text: "red"})
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// interruptDuringTools stops the turn once its tool batch runs.
func interruptDuringTools(t *testing.T, rt *Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		if p, err := rt.Running(ctx, "rec"); err == nil && p.CurrentTool != "" &&
			exec.CommandContext(ctx, "pgrep", "-f", "sleep 30").Run() == nil { // the command has started
			_, _ = rt.Interrupt(ctx, "rec", "stop")
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// record writes a workflow's history to workflows/testdata.
func record(t *testing.T, rt *Runtime, workflowID, file string) {
	t.Helper()
	recordRun(t, rt, workflowID, "", file)
}

// recordRun writes the history of one run of workflowID (runID empty: the
// latest) to workflows/testdata/file.
func recordRun(t *testing.T, rt *Runtime, workflowID, runID, file string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	data, events, err := rt.HistoryJSON(ctx, workflowID, runID)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "workflows", "testdata", file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s (%d events)", path, events)
}

// recordingMode is TALARIA_RECORD_HISTORIES ("1", or "overwrite" to
// re-record existing files); the test is skipped when it is not set.
func recordingMode(t *testing.T) string {
	t.Helper()
	mode := os.Getenv("TALARIA_RECORD_HISTORIES")
	if mode == "" {
		t.Skip("set TALARIA_RECORD_HISTORIES=1 to record replay histories")
	}
	return mode
}
