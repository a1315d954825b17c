package workflows

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// controlEnv is a test environment whose CallModel answers from replies,
// each taking `slow` of workflow time.
func controlEnv(t *testing.T, slow time.Duration, replies ...turnapi.CallModelResult) (*testsuite.TestWorkflowEnvironment, *[]turnapi.CallModelInput, *turnapi.FinishTurnInput) {
	env := newTestEnv()
	Register(env)
	(&activities.Activities{}).Register(env)
	// The engine's AwaitTurn, for a coordinator's carried turn (mocked).
	env.RegisterActivityWithOptions(func(context.Context, string) (TurnEnd, error) { return TurnEnd{}, nil }, activity.RegisterOptions{Name: AwaitTurnName})
	// The engine's SendToSession, for a goal's messages (mocked).
	env.RegisterActivityWithOptions(func(context.Context, SendToSessionInput) error { return nil }, activity.RegisterOptions{Name: SendToSessionName})
	// A coordinator's turn reports its end to the coordinator; in this
	// environment the child's result reaches the coordinator first.
	toCoordinator := mock.MatchedBy(func(id string) bool { return strings.HasPrefix(id, "session/") })
	env.OnSignalExternalWorkflow(mock.Anything, toCoordinator, mock.Anything, SignalTurnEnded, mock.Anything).Return(nil).Maybe()
	var inputs []turnapi.CallModelInput
	var finished turnapi.FinishTurnInput
	env.OnActivity(turnapi.BeginTurnName, mock.Anything, mock.Anything).Return(turnapi.BeginTurnResult{Providers: 1}, nil)
	env.OnActivity(turnapi.TurnPolicyName, mock.Anything, mock.Anything).Return(turnapi.TurnPolicyResult{ApprovalPolicy: "ask"}, nil)
	env.OnActivity(turnapi.CallModelName, mock.Anything, mock.Anything).After(slow).Return(
		func(ctx context.Context, in turnapi.CallModelInput) (turnapi.CallModelResult, error) {
			inputs = append(inputs, in)
			r := replies[min(len(inputs), len(replies))-1]
			r.MessageID = int64(len(inputs))
			return r, nil
		})
	env.OnActivity(turnapi.ExecuteToolsName, mock.Anything, mock.Anything).Return(turnapi.ExecuteToolsResult{}, nil)
	env.OnActivity(turnapi.FinishTurnName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in turnapi.FinishTurnInput) (turnapi.FinishTurnResult, error) {
			finished = in
			return turnapi.FinishTurnResult{}, nil
		})
	return env, &inputs, &finished
}

func TestTurnInterruptedDuringModelCall(t *testing.T) {
	env, inputs, finished := controlEnv(t, time.Minute, textReply())
	env.RegisterDelayedCallback(func() {
		var p Progress
		v, err := env.QueryWorkflow(QueryProgress)
		if err != nil || v.Get(&p) != nil || p.APICalls != 1 || p.Interrupted {
			t.Errorf("progress before interrupt = %+v, %v", p, err)
		}
		env.SignalWorkflow(SignalInterrupt, "user pressed stop")
	}, 10*time.Second)
	env.ExecuteWorkflow(TurnWorkflowName, TurnInput{SessionID: "s", TurnNumber: 1})
	var r ConversationResult
	if err := env.GetWorkflowResult(&r); err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted || r.Completed || r.TurnExitReason != StopInterrupted || r.FinalResponse != nil {
		t.Fatalf("result = %+v", r)
	}
	if finished.Status != "interrupted" || len(*inputs) > 1 {
		t.Fatalf("finish = %+v, calls = %d", finished, len(*inputs))
	}
}

func TestTurnSteerDeliveredWithNextCall(t *testing.T) {
	env, inputs, _ := controlEnv(t, time.Minute, toolReply("terminal"), textReply())
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalSteer, "use python instead") }, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		var p Progress
		v, err := env.QueryWorkflow(QueryProgress)
		if err != nil || v.Get(&p) != nil {
			t.Errorf("query: %v", err)
			return
		}
		want := []string{"model call 1: tool_calls", "tools: terminal (0 failed)"}
		if len(p.Recent) != 2 || p.Recent[0] != want[0] || p.Recent[1] != want[1] || p.APICalls != 2 || p.Iteration != 2 {
			t.Errorf("progress during the second call = %+v", p)
		}
	}, 90*time.Second)
	env.ExecuteWorkflow(TurnWorkflowName, TurnInput{SessionID: "s", TurnNumber: 1})
	var r ConversationResult
	if err := env.GetWorkflowResult(&r); err != nil {
		t.Fatal(err)
	}
	if !r.Completed || len(*inputs) != 2 {
		t.Fatalf("result = %+v", r)
	}
	if got := (*inputs)[1].Steers; len(got) != 1 || got[0] != "use python instead" || len((*inputs)[0].Steers) != 0 {
		t.Fatalf("steers = %v / %v", (*inputs)[0].Steers, got)
	}
	if len(r.PendingSteers) != 0 {
		t.Fatalf("delivered steer also handed back: %v", r.PendingSteers)
	}
}

func TestTurnSteerAfterLastCallHandedBack(t *testing.T) {
	env, _, _ := controlEnv(t, time.Minute, textReply())
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalSteer, "one more thing") }, 10*time.Second)
	env.ExecuteWorkflow(TurnWorkflowName, TurnInput{SessionID: "s", TurnNumber: 1})
	var r ConversationResult
	if err := env.GetWorkflowResult(&r); err != nil {
		t.Fatal(err)
	}
	if !r.Completed || len(r.PendingSteers) != 1 || r.PendingSteers[0] != "one more thing" {
		t.Fatalf("result = %+v", r)
	}
}
