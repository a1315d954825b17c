package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// turnEventsOf is every live event of a turn, in order.
func turnEventsOf(ctx context.Context, t *testing.T, rt *Runtime, turnID string) []models.Event {
	t.Helper()
	var all []models.Event
	var after int64
	for {
		evs, err := rt.Store.EventsAfter(ctx, turnID, after, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return all
		}
		all = append(all, evs...)
		after = evs[len(evs)-1].ID
	}
}

// shownKinds lists the kinds of evs that are not streamed text or notices
// (a model call's attempt event is a notice), joined by spaces.
func shownKinds(evs []models.Event) string {
	var kinds []string
	for _, ev := range evs {
		switch ev.Kind {
		case events.KindDelta, events.KindReasoning, events.KindStatus, events.KindWait, events.KindAttempt:
			continue
		}
		kinds = append(kinds, ev.Kind)
	}
	return strings.Join(kinds, " ")
}

// waitForEvent polls the live events of the session's running turn until
// one of kind is stored, and returns the turn's progress then.
func waitForEvent(ctx context.Context, t *testing.T, rt *Runtime, session, kind string) (workflows.Progress, models.Event) {
	t.Helper()
	for ctx.Err() == nil {
		if p, err := rt.Running(ctx, session); err == nil && p.TurnID != "" {
			for _, ev := range turnEventsOf(ctx, t, rt, p.TurnID) {
				if ev.Kind == kind {
					// The progress as it is now, not as it was before
					// the event was written.
					if now, err := rt.Running(ctx, session); err == nil {
						p = now
					}
					return p, ev
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("no %s event before the deadline", kind)
	return workflows.Progress{}, models.Event{}
}

// TestApprovalWaitEvents: a turn whose command waits for an approval
// writes, in order, the approval event (while it waits: the same JSON as
// the progress query's pending approval), approval_decided with the
// choice, then the tool's start and end, then done.
func TestApprovalWaitEvents(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "a1", Name: "terminal", Arguments: `{"command":"rm -rf ./build"}`}),
		fakellm.TextStep("removed"),
	)
	defer model.Close()
	rt := startRuntime(t, model)
	pending := make(chan workflows.Progress, 1)
	go func() {
		p, ev := waitForEvent(ctx, t, rt, "approved", events.KindApproval)
		var got, want map[string]any
		wantData, _ := json.Marshal(p.PendingApproval)
		if p.PendingApproval == nil || json.Unmarshal([]byte(ev.Data), &got) != nil || json.Unmarshal(wantData, &want) != nil ||
			!jsonEqual(got, want) {
			t.Errorf("approval event %s, pending approval %s", ev.Data, wantData)
		}
		pending <- p
		_ = rt.Signal(ctx, p.TurnID, workflows.SignalApproval, workflows.ApprovalDecision{Choice: turnapi.ChoiceOnce})
	}()
	res, err := rt.RunTurn(ctx, workflows.TurnInput{SessionID: "approved", UserMessage: "clean", Model: fakellm.DefaultModel,
		MaxIterations: 5, Workdir: t.TempDir(), Approvals: workflows.ApprovalSettings{Mode: workflows.ApprovalAsk, Timeout: time.Minute}})
	if err != nil || !res.Completed {
		t.Fatalf("turn: %+v, %v", res, err)
	}
	if p := <-pending; p.PendingApproval == nil || p.PendingApproval.CallID != "a1" {
		t.Fatalf("pending approval %+v, want call a1", p.PendingApproval)
	}
	evs := turnEventsOf(ctx, t, rt, res.TurnID)
	if got, want := shownKinds(evs), "approval approval_decided tool_start tool_end done"; got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	var asked turnapi.ApprovalEvent
	var decided turnapi.ApprovalDecidedEvent
	for _, ev := range evs {
		switch ev.Kind {
		case events.KindApproval:
			_ = json.Unmarshal([]byte(ev.Data), &asked)
		case events.KindApprovalDecided:
			_ = json.Unmarshal([]byte(ev.Data), &decided)
		}
	}
	if asked.CallID != "a1" || asked.Command != "rm -rf ./build" || asked.Rule == "" || asked.Reason == "" || asked.Pattern == "" {
		t.Errorf("approval event %+v", asked)
	}
	if decided != (turnapi.ApprovalDecidedEvent{CallID: "a1", Choice: "once"}) {
		t.Errorf("approval_decided event %+v, want call a1 once", decided)
	}
}

// TestClarifyWaitEvents: a clarify question writes question (while it
// waits) and then answered, before the turn's done; the answer's text is
// in no event.
func TestClarifyWaitEvents(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "q1", Name: "clarify", Arguments: `{"question":"Which colour?","choices":["red","blue"]}`}),
		fakellm.TextStep("red it is"),
	)
	defer model.Close()
	rt := startRuntime(t, model)
	const answer = "crimson, my secret favourite"
	go func() {
		p, ev := waitForEvent(ctx, t, rt, "asked", events.KindQuestion)
		var q turnapi.QuestionEvent
		if err := json.Unmarshal([]byte(ev.Data), &q); err != nil || q.CallID != "q1" || q.Question != "Which colour?" ||
			strings.Join(q.Choices, ",") != "red,blue" || p.PendingQuestion == nil {
			t.Errorf("question event %s (%v), pending question %+v", ev.Data, err, p.PendingQuestion)
		}
		_ = rt.Signal(ctx, p.TurnID, workflows.SignalAnswer, workflows.Answer{Text: answer})
	}()
	res, err := rt.RunTurn(ctx, workflows.TurnInput{SessionID: "asked", UserMessage: "paint it", Model: fakellm.DefaultModel,
		MaxIterations: 5, Workdir: t.TempDir(), Approvals: workflows.ApprovalSettings{Mode: workflows.ApprovalAsk, Timeout: time.Minute}})
	if err != nil || !res.Completed {
		t.Fatalf("turn: %+v, %v", res, err)
	}
	evs := turnEventsOf(ctx, t, rt, res.TurnID)
	kinds := shownKinds(evs)
	if !strings.HasPrefix(kinds, "question answered ") || !strings.HasSuffix(kinds, " done") {
		t.Fatalf("events %q, want question, answered, ..., done", kinds)
	}
	for _, ev := range evs {
		if ev.Kind == events.KindAnswered && ev.Data != `{"call_id":"q1","answered":true}` {
			t.Errorf("answered event %s", ev.Data)
		}
		if strings.Contains(ev.Data, "crimson") {
			t.Errorf("event %s %s carries the answer", ev.Kind, ev.Data)
		}
	}
}

// jsonEqual compares two decoded JSON objects.
func jsonEqual(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
