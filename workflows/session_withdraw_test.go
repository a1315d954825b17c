package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TestWithdraw: a queued message withdrawn leaves the queue and never
// runs; one withdrawn before it arrives is refused when it comes (its
// sender is told, not queued); a message whose turn runs is answered with
// that turn (too late to withdraw).
func TestWithdraw(t *testing.T) {
	t.Parallel()
	env, inputs, _ := controlEnv(t, time.Second, textReply())
	reserved := 1
	env.OnActivity(turnapi.ReserveTurnName, mock.Anything, mock.Anything, mock.Anything, mock.Anything).Return(
		func(context.Context, string, string, string) (int, error) { reserved++; return reserved, nil })
	turn1 := TurnWorkflowID("s", 1)
	env.OnActivity(AwaitTurnName, mock.Anything, mock.Anything).After(time.Minute).Return(TurnEnd{TurnID: turn1}, nil)
	got := map[string]Delivery{}
	call := func(at time.Duration, key, update string, arg any) {
		env.RegisterDelayedCallback(func() {
			env.UpdateWorkflow(update, key, &testsuite.TestUpdateCallback{
				OnAccept: func() {},
				OnReject: func(err error) { t.Errorf("%s rejected: %v", key, err) },
				OnComplete: func(v any, err error) {
					if err != nil {
						t.Errorf("%s: %v", key, err)
						return
					}
					got[key] = v.(Delivery)
				},
			}, arg)
		}, at)
	}
	msg := func(id string) Message {
		return Message{RequestID: id, Text: "text of " + id, Mode: BusyQueue, Turn: TurnInput{SessionID: "s"}}
	}
	call(10*time.Second, "deliver r2", UpdateDeliver, msg("r2"))
	call(20*time.Second, "withdraw r2", UpdateWithdraw, "r2")
	call(25*time.Second, "withdraw r3", UpdateWithdraw, "r3")
	call(30*time.Second, "deliver r3", UpdateDeliver, msg("r3"))
	call(35*time.Second, "withdraw r1", UpdateWithdraw, "r1")
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QuerySession)
		var st SessionState
		if err != nil || v.Get(&st) != nil || len(st.Queued) != 0 {
			t.Errorf("after the withdrawals: %+v, %v; want nothing queued", st, err)
		}
	}, 40*time.Second)
	env.ExecuteWorkflow(SessionWorkflowName, SessionInput{SessionID: "s", Idle: time.Minute,
		Running: &CarriedTurn{ID: turn1, Number: 1, Template: Message{RequestID: "r1", Text: "do it", Turn: TurnInput{SessionID: "s"}}}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	want := map[string]Delivery{
		"deliver r2":  {RequestID: "r2", Outcome: DeliveryQueued, Position: 1},
		"withdraw r2": {RequestID: "r2", Outcome: DeliveryWithdrawn},
		"withdraw r3": {RequestID: "r3", Outcome: DeliveryWithdrawn},
		"deliver r3":  {RequestID: "r3", Outcome: DeliveryWithdrawn},
		"withdraw r1": {RequestID: "r1", Outcome: DeliveryStarted, TurnID: turn1},
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %+v, want %+v", k, got[k], w)
		}
	}
	if reserved != 1 || len(*inputs) != 0 {
		t.Fatalf("%d turns, model calls %+v; want no turn after the first", reserved, *inputs)
	}
}
