package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TestSteerForAnEndedTurnRunsNext: a steer the coordinator cannot signal
// to its running turn (the turn has just ended) is not dropped: it runs as
// the session's next turn, and its sender is answered with that turn.
func TestSteerForAnEndedTurnRunsNext(t *testing.T) {
	t.Parallel()
	env, inputs, _ := controlEnv(t, time.Minute, textReply())
	reserved := 0
	env.OnActivity(turnapi.ReserveTurnName, mock.Anything, mock.Anything, mock.Anything, mock.Anything).Return(
		func(context.Context, string, string, string) (int, error) { reserved++; return reserved, nil })
	env.OnSignalExternalWorkflow(mock.Anything, TurnWorkflowID("s", 1), mock.Anything, SignalSteer, mock.Anything).
		Return(errors.New("unknown external workflow execution"))
	var got Delivery
	var gotErr error
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateDeliver, "steer", &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { gotErr = err },
			OnComplete: func(v any, err error) {
				if err != nil {
					gotErr = err
					return
				}
				got = v.(Delivery)
			},
		}, Message{RequestID: "r2", Text: "use python", Mode: BusySteer, Turn: TurnInput{SessionID: "s"}})
	}, 10*time.Second)
	// Turn 1 was started by an earlier run of the coordinator: its end comes
	// from AwaitTurn, and it is not this run's child.
	env.OnActivity(AwaitTurnName, mock.Anything, mock.Anything).After(time.Minute).Return(TurnEnd{TurnID: TurnWorkflowID("s", 1)}, nil)
	reserved = 1
	env.ExecuteWorkflow(SessionWorkflowName, SessionInput{SessionID: "s", Idle: time.Minute,
		Running: &CarriedTurn{ID: TurnWorkflowID("s", 1), Number: 1, Template: Message{RequestID: "r1", Text: "do it", Turn: TurnInput{SessionID: "s"}}}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if gotErr != nil || got.Outcome != DeliveryStarted || got.TurnID != TurnWorkflowID("s", 2) {
		t.Fatalf("steer answered %+v, %v; want started as turn 2", got, gotErr)
	}
	if reserved != 2 || len(*inputs) != 1 || (*inputs)[0].TurnID != TurnWorkflowID("s", 2) {
		t.Fatalf("%d turns reserved, model calls %+v", reserved, *inputs)
	}
}
