package workflows

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/approval"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// humanEventsRun runs a turn whose first reply asks for call, the second
// answers with text; act runs a second into the turn (nil: nobody acts).
// It returns the live events the workflow recorded, in order, and the
// number of tool batches run.
func humanEventsRun(t *testing.T, mode ApprovalMode, call turnapi.ToolCallRef, act func(env *testsuite.TestWorkflowEnvironment), failEvents bool) ([]turnapi.RecordEventInput, int) {
	t.Helper()
	env := newTestEnv()
	Register(env)
	(&activities.Activities{}).Register(env)
	env.OnActivity(turnapi.BeginTurnName, mock.Anything, mock.Anything).Return(turnapi.BeginTurnResult{UserMessageID: 1}, nil)
	calls := 0
	env.OnActivity(turnapi.CallModelName, mock.Anything, mock.Anything).Return(
		func(context.Context, turnapi.CallModelInput) (turnapi.CallModelResult, error) {
			calls++
			if calls > 1 {
				return textReply(), nil
			}
			r := toolReply(call.Name)
			r.ToolCalls[0] = call
			return r, nil
		})
	batches := 0
	env.OnActivity(turnapi.ExecuteToolsName, mock.Anything, mock.Anything).Return(
		func(context.Context, turnapi.ExecuteToolsInput) (turnapi.ExecuteToolsResult, error) {
			batches++
			return turnapi.ExecuteToolsResult{}, nil
		})
	env.OnActivity(turnapi.SaveGrantName, mock.Anything, mock.Anything).Return(nil)
	var recorded []turnapi.RecordEventInput
	env.OnActivity(turnapi.RecordEventName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in turnapi.RecordEventInput) error {
			recorded = append(recorded, in)
			if failEvents {
				return temporal.NewNonRetryableApplicationError("the store refused it", activities.InvalidEvent, nil)
			}
			return nil
		})
	env.OnActivity(turnapi.FinishTurnName, mock.Anything, mock.Anything).Return(turnapi.FinishTurnResult{}, nil)
	if act != nil {
		env.RegisterDelayedCallback(func() { act(env) }, time.Second)
	}
	env.SetTestTimeout(30 * time.Second)
	env.ExecuteWorkflow(TurnWorkflowName, TurnInput{SessionID: "s", TurnNumber: 1, MaxIterations: 10,
		Approvals: ApprovalSettings{Mode: mode, Timeout: time.Minute}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	return recorded, batches
}

// TestHumanWaitsRecordEvents: a wait on a person is bracketed by two live
// events recorded through RecordEvent, with the JSON clients read: the
// command or question first, then how the wait ended (the choice after
// the unknown-choice rule, a timeout, an interrupt; answered or not).
func TestHumanWaitsRecordEvents(t *testing.T) {
	risky := turnapi.ToolCallRef{ID: "c1", Name: "terminal", Command: "rm -rf ./x",
		Risk: turnapi.Assessment{Risk: turnapi.RiskDangerous, Rule: approval.RuleRecursiveDelete, Reason: "recursive delete", Pattern: "rm -rf ./x"}}
	clarify := turnapi.ToolCallRef{ID: "q1", Name: "clarify", Question: "Which colour?", Choices: []string{"red", "blue"}}
	decide := func(c turnapi.ApprovalChoice) func(*testsuite.TestWorkflowEnvironment) {
		return func(env *testsuite.TestWorkflowEnvironment) {
			env.SignalWorkflow(SignalApproval, ApprovalDecision{Choice: c})
		}
	}
	interrupt := func(env *testsuite.TestWorkflowEnvironment) { env.SignalWorkflow(SignalInterrupt, "stop") }
	approvalData := `{"call_id":"c1","command":"rm -rf ./x","rule":"` + approval.RuleRecursiveDelete + `","reason":"recursive delete","pattern":"rm -rf ./x"}`
	questionData := `{"call_id":"q1","question":"Which colour?","choices":["red","blue"]}`
	cases := []struct {
		name    string
		mode    ApprovalMode
		call    turnapi.ToolCallRef
		act     func(*testsuite.TestWorkflowEnvironment)
		want    []turnapi.RecordEventInput
		batches int
	}{
		{"approved once", ApprovalAsk, risky, decide(turnapi.ChoiceOnce), []turnapi.RecordEventInput{
			{Kind: turnapi.EventApproval, Data: approvalData},
			{Kind: turnapi.EventApprovalDecided, Data: `{"call_id":"c1","choice":"once"}`}}, 1},
		{"approved always", ApprovalAsk, risky, decide(turnapi.ChoiceAlways), []turnapi.RecordEventInput{
			{Kind: turnapi.EventApproval, Data: approvalData},
			{Kind: turnapi.EventApprovalDecided, Data: `{"call_id":"c1","choice":"always"}`}}, 1},
		{"unknown choice denies", ApprovalAsk, risky, decide("yolo"), []turnapi.RecordEventInput{
			{Kind: turnapi.EventApproval, Data: approvalData},
			{Kind: turnapi.EventApprovalDecided, Data: `{"call_id":"c1","choice":"deny"}`}}, 1},
		{"timed out", ApprovalAsk, risky, nil, []turnapi.RecordEventInput{
			{Kind: turnapi.EventApproval, Data: approvalData},
			{Kind: turnapi.EventApprovalDecided, Data: `{"call_id":"c1","choice":"timeout"}`}}, 1},
		{"interrupted approval", ApprovalAsk, risky, interrupt, []turnapi.RecordEventInput{
			{Kind: turnapi.EventApproval, Data: approvalData},
			{Kind: turnapi.EventApprovalDecided, Data: `{"call_id":"c1","choice":"interrupted"}`}}, 0},
		{"answered", ApprovalAsk, clarify, func(env *testsuite.TestWorkflowEnvironment) {
			env.SignalWorkflow(SignalAnswer, Answer{Text: "a secret preference"})
		}, []turnapi.RecordEventInput{
			{Kind: turnapi.EventQuestion, Data: questionData},
			{Kind: turnapi.EventAnswered, Data: `{"call_id":"q1","answered":true}`}}, 1},
		{"interrupted question", ApprovalAsk, clarify, interrupt, []turnapi.RecordEventInput{
			{Kind: turnapi.EventQuestion, Data: questionData},
			{Kind: turnapi.EventAnswered, Data: `{"call_id":"q1","answered":false}`}}, 0},
		// No wait, no events.
		{"refused under deny", ApprovalDeny, risky, nil, nil, 1},
		{"clarify unattended", ApprovalDeny, clarify, nil, nil, 1},
		{"run when off", ApprovalOff, risky, nil, nil, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, batches := humanEventsRun(t, c.mode, c.call, c.act, false)
			for i := range got {
				if got[i].TurnID != "default-test-workflow-id" {
					t.Errorf("event %d of turn %q, want the workflow's id", i, got[i].TurnID)
				}
				got[i].TurnID = ""
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("events =\n%+v\nwant\n%+v", got, c.want)
			}
			if batches != c.batches {
				t.Errorf("%d tool batches, want %d", batches, c.batches)
			}
		})
	}
}

// TestHumanEventFailureDoesNotFailTheTurn: events that cannot be written
// leave the turn as it would be without them.
func TestHumanEventFailureDoesNotFailTheTurn(t *testing.T) {
	risky := turnapi.ToolCallRef{ID: "c1", Name: "terminal", Command: "rm -rf ./x",
		Risk: turnapi.Assessment{Risk: turnapi.RiskDangerous, Rule: approval.RuleRecursiveDelete, Pattern: "rm -rf ./x"}}
	got, batches := humanEventsRun(t, ApprovalAsk, risky, func(env *testsuite.TestWorkflowEnvironment) {
		env.SignalWorkflow(SignalApproval, ApprovalDecision{Choice: turnapi.ChoiceOnce})
	}, true)
	if len(got) != 2 || batches != 1 {
		t.Fatalf("%d events tried, %d batches; want 2 and the approved command run", len(got), batches)
	}
}

func TestDecidedChoice(t *testing.T) {
	cases := []struct {
		ok   bool
		d    *ApprovalDecision
		want string
	}{
		{true, &ApprovalDecision{Choice: turnapi.ChoiceOnce}, "once"},
		{true, &ApprovalDecision{Choice: turnapi.ChoiceSession}, "session"},
		{true, &ApprovalDecision{Choice: turnapi.ChoiceAlways}, "always"},
		{true, &ApprovalDecision{Choice: turnapi.ChoiceDeny}, "deny"},
		{true, nil, turnapi.DecidedInterrupted},
		{false, nil, turnapi.DecidedTimeout},
		{false, &ApprovalDecision{Choice: turnapi.ChoiceOnce}, turnapi.DecidedTimeout}, // refused as a timeout
		{true, &ApprovalDecision{Choice: "yolo"}, "once"},                              // a run before unknown-choice-denies ran it
	}
	for _, c := range cases {
		if got := decidedChoice(c.ok, c.d); got != c.want {
			t.Errorf("decidedChoice(%v, %+v) = %q, want %q", c.ok, c.d, got, c.want)
		}
	}
}
