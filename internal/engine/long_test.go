package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// deterministicLoop calls todo (with arguments that differ per step) until
// the conversation holds `steps` tool rounds, then answers; its replies
// depend only on the conversation, so two sessions get the same transcript.
func deterministicLoop(steps int) fakellm.Responder {
	return func(req fakellm.Request) fakellm.Step {
		n := len(req.Body.Messages)
		if len(req.Body.Tools) == 0 || n >= 2*steps+2 {
			return fakellm.TextStep(fmt.Sprintf("finished after %d messages", n))
		}
		return fakellm.ToolStep(fakellm.ToolCall{ID: fmt.Sprintf("c%d", n), Name: "todo",
			Arguments: fmt.Sprintf(`{"todos":[{"id":"1","content":"step %d","status":"in_progress"}]}`, n)})
	}
}

// runsOf counts the runs of a workflow by following continue-as-new back
// from its latest run.
func runsOf(t *testing.T, rt *Runtime, workflowID string) int {
	t.Helper()
	runs, runID := 0, ""
	for {
		iter := rt.Client.GetWorkflowHistory(context.Background(), workflowID, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		runs++
		runID = ev.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if runID == "" {
			return runs
		}
	}
}

func transcriptText(msgs []models.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "%s|%s|%s|", m.Role, m.Content, m.ToolCallID)
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "%s:%s:%s;", c.ID, c.Function.Name, c.Function.Arguments)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestScaleThousandIterationTurn: a 1,000-iteration turn continues as new several
// times and ends with the same transcript as a reference run that never does.
func TestScaleThousandIterationTurn(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("1,000 iterations, twice")
	}
	const steps = 1000
	model := fakellm.New(fakellm.WithResponder(deterministicLoop(steps)))
	defer model.Close()
	rt := startRuntime(t, model)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	run := func(session string, every int) workflows.ConversationResult {
		res, err := rt.RunTurn(ctx, workflows.TurnInput{SessionID: session, UserMessage: "work through it",
			Model: fakellm.DefaultModel, MaxIterations: steps + 10, ContinueEvery: every, Workdir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Completed || res.APICalls != steps+1 {
			t.Fatalf("%s: %+v", session, res)
		}
		return res
	}
	long := run("long", 300)
	ref := run("reference", -1)
	if runs := runsOf(t, rt, long.TurnID); runs < 3 {
		t.Fatalf("the long turn ran %d times, want continue-as-new at least twice", runs)
	}
	if runs := runsOf(t, rt, ref.TurnID); runs != 1 {
		t.Fatalf("the reference turn ran %d times", runs)
	}
	a, _ := rt.Store.Messages(ctx, "long")
	b, _ := rt.Store.Messages(ctx, "reference")
	if len(a) != 2*steps+2 || transcriptText(a) != transcriptText(b) {
		t.Fatalf("transcripts differ: %d vs %d messages", len(a), len(b))
	}
	if long.Usage != ref.Usage {
		t.Fatalf("usage differs: %+v vs %+v", long.Usage, ref.Usage)
	}
}

// TestSteersDuringContinueAsNew: steers sent while a turn keeps continuing
// as new are all delivered, each exactly once (to that turn, or as the
// session's next message when they arrive after its last model call).
func TestSteersDuringContinueAsNew(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		step := deterministicLoop(40)(req)
		step.Delay = 20 * time.Millisecond
		return step
	}))
	defer model.Close()
	rt := startRuntime(t, model)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	done := make(chan workflows.ConversationResult, 1)
	go func() {
		res, err := rt.RunTurn(ctx, workflows.TurnInput{SessionID: "steady", UserMessage: "go", Model: fakellm.DefaultModel,
			MaxIterations: 100, ContinueEvery: 3, Workdir: t.TempDir()})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	const steers = 12
	id := workflows.TurnWorkflowID("steady", 1)
	for i := 0; i < steers; {
		if err := rt.Signal(ctx, id, workflows.SignalSteer, fmt.Sprintf("steer number %d", i)); err == nil {
			i++
		}
		time.Sleep(70 * time.Millisecond)
	}
	res := <-done
	if runs := runsOf(t, rt, res.TurnID); runs < 5 {
		t.Fatalf("only %d runs: the steers did not cross continue-as-new", runs)
	}
	// Pending steers become the next turn; wait for the session to go idle.
	waitIdle(t, rt, "steady")
	all, err := rt.Store.AllMessages(ctx, "steady")
	if err != nil {
		t.Fatal(err)
	}
	text := transcriptText(all)
	for i := 0; i < steers; i++ {
		if n := strings.Count(text, fmt.Sprintf("steer number %d|", i)); n != 1 {
			for _, line := range strings.Split(text, "\n") {
				if strings.Contains(line, "steer") {
					t.Log(line)
				}
			}
			dumpRuns(t, rt, res.TurnID)
			t.Fatalf("steer %d stored %d times", i, n)
		}
	}
}

func waitIdle(t *testing.T, rt *Runtime, session string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		st, err := rt.SessionState(context.Background(), session)
		if err == nil && st.Running == "" && len(st.Queued) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the session never went idle")
}

// dumpRuns logs the signals, continue-as-new and model calls of every run.
func dumpRuns(t *testing.T, rt *Runtime, workflowID string) {
	runID := ""
	for {
		iter := rt.Client.GetWorkflowHistory(context.Background(), workflowID, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		var prev string
		for iter.HasNext() {
			ev, err := iter.Next()
			if err != nil {
				return
			}
			switch {
			case ev.GetWorkflowExecutionStartedEventAttributes() != nil:
				prev = ev.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
				t.Logf("run %s started (from %s)", ev.GetWorkflowExecutionStartedEventAttributes().GetOriginalExecutionRunId(), prev)
			case ev.GetWorkflowExecutionSignaledEventAttributes() != nil:
				a := ev.GetWorkflowExecutionSignaledEventAttributes()
				t.Logf("  %d signal %s %s", ev.GetEventId(), a.GetSignalName(), a.GetInput().GetPayloads()[0].GetData())
			case ev.GetWorkflowExecutionContinuedAsNewEventAttributes() != nil:
				t.Logf("  %d continued as new", ev.GetEventId())
			case ev.GetActivityTaskScheduledEventAttributes() != nil:
				a := ev.GetActivityTaskScheduledEventAttributes()
				if a.GetActivityType().GetName() == "CallModel" {
					t.Logf("  %d CallModel %s", ev.GetEventId(), a.GetInput().GetPayloads()[0].GetData())
				}
			}
		}
		if prev == "" {
			return
		}
		runID = prev
	}
}
