package workflows

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// told records the signals a coordinator sends to the workflows that sent
// messages (Message.Notify).
type told struct {
	mu  sync.Mutex
	got []toldSignal
}

type toldSignal struct {
	to, name string
	arg      any
}

// listen mocks the signals to the workflow id.
func (r *told) listen(env *testsuite.TestWorkflowEnvironment, id string) {
	env.OnSignalExternalWorkflow(mock.Anything, id, mock.Anything, mock.Anything, mock.Anything).Return(
		func(_ string, to, _ string, name string, arg any) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.got = append(r.got, toldSignal{to: to, name: name, arg: arg})
			return nil
		})
}

func (r *told) all() []toldSignal {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]toldSignal(nil), r.got...)
}

// countTurns mocks ReserveTurn, numbering turns from first.
func countTurns(env *testsuite.TestWorkflowEnvironment, first int) *int {
	n := first - 1
	env.OnActivity(turnapi.ReserveTurnName, mock.Anything, mock.Anything, mock.Anything, mock.Anything).Return(
		func(context.Context, string, string, string) (int, error) { n++; return n, nil })
	return &n
}

// TestCarriedTurnEndsBySignal: a coordinator run that took over a turn
// that reports its end waits for that signal, not for an activity: a
// signal for another turn changes nothing, the turn's own ends it, the
// workflow that asked is told the result, and the steers the turn could
// not deliver run next.
func TestCarriedTurnEndsBySignal(t *testing.T) {
	t.Parallel()
	env, inputs, _ := controlEnv(t, time.Second, textReply())
	awaited := 0
	env.OnActivity(AwaitTurnName, mock.Anything, mock.Anything).Return(
		func(context.Context, string) (TurnEnd, error) { awaited++; return TurnEnd{}, nil })
	last := countTurns(env, 2)
	var chat told
	chat.listen(env, "chat/1")
	turn1 := TurnWorkflowID("s", 1)
	probeAnswers(env, turn1, nil)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalTurnEnded, ConversationResult{TurnID: TurnWorkflowID("s", 9), Completed: true})
	}, 5*time.Second)
	env.RegisterDelayedCallback(func() {
		var st SessionState
		v, err := env.QueryWorkflow(QuerySession)
		if err != nil || v.Get(&st) != nil || st.Running != turn1 {
			t.Errorf("after a stale end signal: %+v, %v; want turn 1 still running", st, err)
		}
		env.SignalWorkflow(SignalTurnEnded, ConversationResult{TurnID: turn1, Completed: true, FinalMessageID: 7,
			PendingSteers: []string{"and the tests"}})
	}, 10*time.Second)
	env.ExecuteWorkflow(SessionWorkflowName, SessionInput{SessionID: "s", Idle: time.Minute,
		Running: &CarriedTurn{ID: turn1, Number: 1, Reports: true, Watchers: []string{"chat/1"},
			Template: Message{RequestID: "chat/1", Notify: true, Text: "do it", Turn: TurnInput{SessionID: "s"}}}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if awaited != 0 {
		t.Fatalf("AwaitTurn ran %d times; the turn reports its end", awaited)
	}
	got := chat.all()
	if len(got) != 1 || got[0].name != SignalTurnEnded {
		t.Fatalf("chat told %+v; want the turn's end", got)
	}
	if res := got[0].arg.(ConversationResult); res.TurnID != turn1 || res.FinalMessageID != 7 || !res.Completed {
		t.Fatalf("chat told %+v", res)
	}
	if *last != 2 || len(*inputs) != 1 || (*inputs)[0].TurnID != TurnWorkflowID("s", 2) {
		t.Fatalf("turns up to %d, model calls %+v; want the steer run as turn 2", *last, *inputs)
	}
}

// TestNotifiedSenderIsToldStartAndEnd: a message whose sender asked is
// followed by two signals to it, the turn it became and how it ended; the
// turn is not started to report its end (changeTurnEndAsked): its end
// comes as the child's result.
func TestNotifiedSenderIsToldStartAndEnd(t *testing.T) {
	t.Parallel()
	env, _, _ := controlEnv(t, time.Second, textReply())
	countTurns(env, 1)
	var chat told
	chat.listen(env, "chat/2")
	var started TurnInput
	env.SetOnChildWorkflowStartedListener(func(_ *workflow.Info, _ workflow.Context, args converter.EncodedValues) {
		if err := args.Get(&started); err != nil {
			t.Error(err)
		}
	})
	env.ExecuteWorkflow(SessionWorkflowName, SessionInput{SessionID: "s", Idle: time.Minute,
		Queue: []Message{{RequestID: "chat/2", Notify: true, Text: "hello", Turn: TurnInput{SessionID: "s"}}}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	got := chat.all()
	if len(got) != 2 || got[0].name != SignalTurnStarted || got[1].name != SignalTurnEnded {
		t.Fatalf("chat told %+v; want started, then ended", got)
	}
	if started.ReportEnd {
		t.Fatal("the turn was started to report its end; the run that starts it gets the child's result")
	}
	turn1 := TurnWorkflowID("s", 1)
	if d := got[0].arg.(Delivery); d.TurnID != turn1 || d.Outcome != DeliveryStarted || d.RequestID != "chat/2" {
		t.Fatalf("started: %+v", d)
	}
	if res := got[1].arg.(ConversationResult); res.TurnID != turn1 || !res.Completed {
		t.Fatalf("ended: %+v (%s)", res, derefText(res.Error))
	}
}

// TestTerminatedCarriedTurnIsRead: a carried turn that reports its end but
// was terminated from outside never sends it; the first signal it refuses
// (the probe as the run starts) makes the coordinator read its end once,
// and a message that comes runs.
func TestTerminatedCarriedTurnIsRead(t *testing.T) {
	t.Parallel()
	env, inputs, _ := controlEnv(t, time.Second, textReply())
	awaited := 0
	env.OnActivity(AwaitTurnName, mock.Anything, mock.Anything).Return(
		func(context.Context, string) (TurnEnd, error) { awaited++; return TurnEnd{}, nil })
	countTurns(env, 2)
	turn1 := TurnWorkflowID("s", 1)
	probeAnswers(env, turn1, errors.New("unknown external workflow execution"))
	var got Delivery
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateDeliver, "next", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Error(err) },
			OnComplete: func(v any, err error) {
				if err != nil {
					t.Error(err)
					return
				}
				got = v.(Delivery)
			},
		}, Message{RequestID: "r2", Text: "something else", Turn: TurnInput{SessionID: "s"}})
	}, 10*time.Second)
	env.ExecuteWorkflow(SessionWorkflowName, SessionInput{SessionID: "s", Idle: time.Minute,
		Running: &CarriedTurn{ID: turn1, Number: 1, Reports: true, Template: Message{RequestID: "r1", Text: "do it", Turn: TurnInput{SessionID: "s"}}}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if awaited != 1 || got.TurnID != TurnWorkflowID("s", 2) || len(*inputs) != 1 {
		t.Fatalf("AwaitTurn ran %d times, message %+v, model calls %d; want the end read once and the message run as turn 2",
			awaited, got, len(*inputs))
	}
}

// TestSteerWhileTheEndIsReported: a steer that reaches a turn while it
// tells its coordinator of its end was not in that report: the turn sends
// it in a second, late report, and the coordinator runs it next, after
// the turn that ended (a late report for a turn that did not end last
// changes nothing).
func TestSteerWhileTheEndIsReported(t *testing.T) {
	t.Parallel()
	env := newTestEnv()
	Register(env)
	(&activities.Activities{}).Register(env)
	env.OnActivity(turnapi.BeginTurnName, mock.Anything, mock.Anything).Return(turnapi.BeginTurnResult{Providers: 1}, nil)
	env.OnActivity(turnapi.CallModelName, mock.Anything, mock.Anything).Return(textReply(), nil)
	env.OnActivity(turnapi.FinishTurnName, mock.Anything, mock.Anything).Return(turnapi.FinishTurnResult{}, nil)
	var reports told
	env.OnSignalExternalWorkflow(mock.Anything, SessionWorkflowID("s"), mock.Anything, SignalTurnEnded, mock.Anything).Return(
		func(_ string, to, _ string, name string, arg any) error {
			reports.mu.Lock()
			first := len(reports.got) == 0
			reports.got = append(reports.got, toldSignal{to: to, name: name, arg: arg})
			reports.mu.Unlock()
			if first {
				env.SignalWorkflow(SignalSteer, "one more thing")
			}
			return nil
		})
	env.ExecuteWorkflow(TurnWorkflowName, TurnInput{SessionID: "s", TurnNumber: 1, ReportEnd: true})
	var res ConversationResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	got := reports.all()
	if len(got) != 2 {
		t.Fatalf("reports %+v; want the end, then the late steer", got)
	}
	end, late := got[0].arg.(ConversationResult), got[1].arg.(ConversationResult)
	if end.Late || !end.Completed || len(end.PendingSteers) != 0 {
		t.Fatalf("first report %+v", end)
	}
	if !late.Late || late.TurnID != end.TurnID || len(late.PendingSteers) != 1 || late.PendingSteers[0] != "one more thing" {
		t.Fatalf("late report %+v", late)
	}

	// The coordinator's side of the two reports.
	cenv, inputs, _ := controlEnv(t, time.Second, textReply())
	countTurns(cenv, 2)
	turn1 := TurnWorkflowID("s", 1)
	probeAnswers(cenv, turn1, nil)
	cenv.RegisterDelayedCallback(func() {
		cenv.SignalWorkflow(SignalTurnEnded, ConversationResult{TurnID: turn1, Completed: true})
		cenv.SignalWorkflow(SignalTurnEnded, ConversationResult{TurnID: TurnWorkflowID("s", 7), Late: true, PendingSteers: []string{"stale"}})
		cenv.SignalWorkflow(SignalTurnEnded, ConversationResult{TurnID: turn1, Late: true, PendingSteers: []string{"one more thing"}})
	}, 10*time.Second)
	cenv.ExecuteWorkflow(SessionWorkflowName, SessionInput{SessionID: "s", Idle: time.Minute,
		Running: &CarriedTurn{ID: turn1, Number: 1, Reports: true, Template: Message{RequestID: "r1", Text: "do it", Turn: TurnInput{SessionID: "s"}}}})
	if err := cenv.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(*inputs) != 1 || (*inputs)[0].TurnID != TurnWorkflowID("s", 2) {
		t.Fatalf("model calls %+v; want the late steer run as turn 2, and nothing for the stale report", *inputs)
	}
}

// TestTurnReportsItsEndWhenAsked: a turn started without ReportEnd signals
// its end to its coordinator only when a coordinator run asked it to
// (SignalReportEnd), whenever in the turn the ask came.
func TestTurnReportsItsEndWhenAsked(t *testing.T) {
	t.Parallel()
	for _, asked := range []bool{false, true} {
		env := newTestEnv()
		Register(env)
		(&activities.Activities{}).Register(env)
		env.OnActivity(turnapi.BeginTurnName, mock.Anything, mock.Anything).Return(turnapi.BeginTurnResult{Providers: 1}, nil)
		env.OnActivity(turnapi.CallModelName, mock.Anything, mock.Anything).Return(
			func(context.Context, turnapi.CallModelInput) (turnapi.CallModelResult, error) {
				if asked {
					env.SignalWorkflow(SignalReportEnd, nil)
				}
				return textReply(), nil
			})
		env.OnActivity(turnapi.FinishTurnName, mock.Anything, mock.Anything).Return(turnapi.FinishTurnResult{}, nil)
		var reports told
		env.OnSignalExternalWorkflow(mock.Anything, SessionWorkflowID("s"), mock.Anything, SignalTurnEnded, mock.Anything).Return(
			func(_ string, to, _ string, name string, arg any) error {
				reports.mu.Lock()
				defer reports.mu.Unlock()
				reports.got = append(reports.got, toldSignal{to: to, name: name, arg: arg})
				return nil
			}).Maybe()
		env.ExecuteWorkflow(TurnWorkflowName, TurnInput{SessionID: "s", TurnNumber: 1})
		var res ConversationResult
		if err := env.GetWorkflowResult(&res); err != nil {
			t.Fatal(err)
		}
		got := reports.all()
		if asked && (len(got) != 1 || !got[0].arg.(ConversationResult).Completed) {
			t.Fatalf("asked: reports %+v; want the end once", got)
		}
		if !asked && len(got) != 0 {
			t.Fatalf("not asked: reports %+v; want none", got)
		}
	}
}

// probeAnswers mocks the coordinator's probe of a carried turn (an empty
// steer), answering err.
func probeAnswers(env *testsuite.TestWorkflowEnvironment, turnID string, err error) {
	env.OnSignalExternalWorkflow(mock.Anything, turnID, mock.Anything, SignalSteer, "").Return(err)
}

// TestGoalLeavesPendingSteersToTheCoordinator: the steers a goal's turn
// could not deliver are the coordinator's to run (it queues them as the
// turn ends); the goal does not hand them on again when it ends.
func TestGoalLeavesPendingSteersToTheCoordinator(t *testing.T) {
	t.Parallel()
	env, _, _ := controlEnv(t, time.Second, textReply())
	env.OnActivity(turnapi.JudgeGoalName, mock.Anything, mock.Anything).Return(turnapi.JudgeGoalResult{Verdict: turnapi.VerdictDone}, nil)
	var sent []Message
	env.OnActivity(SendToSessionName, mock.Anything, mock.Anything).Return(func(_ context.Context, in SendToSessionInput) error {
		sent = append(sent, in.Message)
		return nil
	})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalTurnStarted, Delivery{RequestID: sent[0].RequestID, Outcome: DeliveryStarted, TurnID: "turn/g/1"})
		env.SignalWorkflow(SignalTurnEnded, ConversationResult{TurnID: "turn/g/1", Completed: true, PendingSteers: []string{"late words"}})
	}, time.Minute)
	env.ExecuteWorkflow(GoalWorkflowName, GoalInput{SessionID: "g", Goal: "ship it", Turn: TurnInput{SessionID: "g"}})
	var res GoalResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != GoalDone || len(sent) != 1 || sent[0].Text != "ship it" || !sent[0].Notify || sent[0].Sender != GoalWorkflowID("g") {
		t.Fatalf("goal %+v, messages sent %+v; want only the goal's turn, sent to be told", res, sent)
	}
}
