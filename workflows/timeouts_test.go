package workflows

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// timeouts collects the start-to-close timeout of every activity (and
// local activity) the workflows start, by activity name: the longest seen.
type timeouts struct {
	mu   sync.Mutex
	seen map[string]time.Duration
}

func (o *timeouts) watch(env *testsuite.TestWorkflowEnvironment) {
	record := func(info *activity.Info) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.seen == nil {
			o.seen = map[string]time.Duration{}
		}
		o.seen[info.ActivityType.Name] = max(o.seen[info.ActivityType.Name], info.StartToCloseTimeout)
	}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) { record(info) })
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) { record(info) })
}

// TestNoActivityWaitsForAWorkflow: waits are signals, so no activity the
// workflows start waits for another workflow: each one's start-to-close
// timeout stays within the model-call limit, but a tool batch's, which is
// the tool timeout the turn was given (the commands' own work). It runs a
// coordinator that takes a reporting turn over and then runs a turn with a
// tool call, a chat message to its reply, and a goal with its progress
// check, and lists every activity they start with its timeout.
func TestNoActivityWaitsForAWorkflow(t *testing.T) {
	t.Parallel()
	var all timeouts

	// A coordinator: a carried turn ends by signal, a queued message's
	// turn calls a tool, then answers.
	env, _, _ := controlEnv(t, time.Second, toolReply("terminal"), textReply())
	all.watch(env)
	countTurns(env, 2)
	turn1 := TurnWorkflowID("s", 1)
	probeAnswers(env, turn1, nil)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalTurnEnded, ConversationResult{TurnID: turn1, Completed: true})
	}, 5*time.Second)
	env.ExecuteWorkflow(SessionWorkflowName, SessionInput{SessionID: "s", Idle: time.Minute,
		Running: &CarriedTurn{ID: turn1, Number: 1, Reports: true, Template: Message{RequestID: "r1", Turn: TurnInput{SessionID: "s"}}},
		Queue:   []Message{{RequestID: "r2", Text: "run it", Turn: TurnInput{SessionID: "s"}}}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}

	// A chat message: handed over, told its turn's start and end, replied.
	chat := newTestEnv()
	all.watch(chat)
	RegisterGateway(chat)
	chat.RegisterActivityWithOptions(func(context.Context, ChatMessageInput) error { return nil }, activity.RegisterOptions{Name: ChatSubmitName})
	chat.RegisterActivityWithOptions(func(context.Context, ChatMessageInput, ChatTurn) error { return nil }, activity.RegisterOptions{Name: ChatFollowName})
	chat.RegisterActivityWithOptions(func(context.Context, ChatReplyInput) error { return nil }, activity.RegisterOptions{Name: ChatReplyName})
	// Following the turn lasts until the workflow cancels it.
	chat.OnActivity(ChatFollowName, mock.Anything, mock.Anything, mock.Anything).After(10 * time.Minute).Return(nil)
	chat.RegisterDelayedCallback(func() {
		chat.SignalWorkflow(SignalTurnStarted, Delivery{RequestID: "m", Outcome: DeliveryStarted, TurnID: "turn/c/1"})
	}, time.Second)
	chat.RegisterDelayedCallback(func() {
		chat.SignalWorkflow(SignalTurnEnded, ConversationResult{TurnID: "turn/c/1", Completed: true, FinalMessageID: 3})
	}, time.Minute)
	chat.ExecuteWorkflow(ChatMessageWorkflowName, ChatMessageInput{Platform: "telegram", ChatID: "1", MessageID: "2",
		Message: Message{Text: "hi", Turn: TurnInput{SessionID: "c"}}})
	if err := chat.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}

	// A goal: its turn's message goes to the session's coordinator, which
	// tells it the turn's start and end; then the progress check says it
	// is done.
	goal, _, _ := controlEnv(t, time.Second, textReply())
	all.watch(goal)
	goal.OnActivity(turnapi.JudgeGoalName, mock.Anything, mock.Anything).Return(turnapi.JudgeGoalResult{Verdict: turnapi.VerdictDone}, nil)
	var sent Message
	goal.OnActivity(SendToSessionName, mock.Anything, mock.Anything).Return(func(_ context.Context, in SendToSessionInput) error {
		sent = in.Message
		return nil
	})
	goal.RegisterDelayedCallback(func() {
		goal.SignalWorkflow(SignalTurnStarted, Delivery{RequestID: sent.RequestID, Outcome: DeliveryStarted, TurnID: "turn/g/1"})
		goal.SignalWorkflow(SignalTurnEnded, ConversationResult{TurnID: "turn/g/1", Completed: true, FinalMessageID: 5})
	}, time.Minute)
	goal.ExecuteWorkflow(GoalWorkflowName, GoalInput{SessionID: "g", Goal: "ship it", Turn: TurnInput{SessionID: "g"}})
	if err := goal.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}

	limit := modelCallLimit(DefaultModelTimeout)
	names := make([]string, 0, len(all.seen))
	for name := range all.seen {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		d, bound := all.seen[name], limit
		if name == turnapi.ExecuteToolsName {
			bound = DefaultToolTimeout
		}
		t.Logf("%-16s %v", name, d)
		if d <= 0 || d > bound {
			t.Errorf("%s: start-to-close %v, want within %v", name, d, bound)
		}
	}
	for _, want := range []string{turnapi.CallModelName, turnapi.ExecuteToolsName, turnapi.ReserveTurnName, turnapi.JudgeGoalName, SendToSessionName,
		ChatSubmitName, ChatFollowName, ChatReplyName} {
		if _, ok := all.seen[want]; !ok {
			t.Errorf("%s never ran: the scenarios no longer cover it", want)
		}
	}
	for _, legacy := range []string{AwaitTurnName, ChatAwaitTurnName, ChatHandoffName} {
		if _, ok := all.seen[legacy]; ok {
			t.Errorf("%s ran: new work waits in an activity", legacy)
		}
	}
}
