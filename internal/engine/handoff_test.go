package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// callCounter counts the client calls a sender makes to Temporal.
type callCounter struct {
	interceptor.ClientInterceptorBase
	queries, signalStarts, updateStarts, updates atomic.Int64
}

func (c *callCounter) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	return &countingOutbound{ClientOutboundInterceptorBase: interceptor.ClientOutboundInterceptorBase{Next: next}, c: c}
}

type countingOutbound struct {
	interceptor.ClientOutboundInterceptorBase
	c *callCounter
}

func (o *countingOutbound) QueryWorkflow(ctx context.Context, in *interceptor.ClientQueryWorkflowInput) (converter.EncodedValue, error) {
	o.c.queries.Add(1)
	return o.Next.QueryWorkflow(ctx, in)
}

func (o *countingOutbound) SignalWithStartWorkflow(ctx context.Context, in *interceptor.ClientSignalWithStartWorkflowInput) (client.WorkflowRun, error) {
	o.c.signalStarts.Add(1)
	return o.Next.SignalWithStartWorkflow(ctx, in)
}

func (o *countingOutbound) UpdateWithStartWorkflow(ctx context.Context, in *interceptor.ClientUpdateWithStartWorkflowInput) (client.WorkflowUpdateHandle, error) {
	o.c.updateStarts.Add(1)
	return o.Next.UpdateWithStartWorkflow(ctx, in)
}

func (o *countingOutbound) UpdateWorkflow(ctx context.Context, in *interceptor.ClientUpdateWorkflowInput) (client.WorkflowUpdateHandle, error) {
	o.c.updates.Add(1)
	return o.Next.UpdateWorkflow(ctx, in)
}

// countCalls makes rt's client count its calls; it returns the counter and
// the uncounted client (for the test's own looks).
func countCalls(t *testing.T, rt *Runtime) (*callCounter, client.Client) {
	t.Helper()
	counter := &callCounter{}
	plain := rt.Client
	counted, err := client.NewClientFromExisting(plain, client.Options{Interceptors: []interceptor.ClientInterceptor{counter}})
	if err != nil {
		t.Fatal(err)
	}
	rt.Client = counted
	t.Cleanup(func() { rt.Client = plain })
	return counter, plain
}

// answerEvery answers every model call with a short text after delay.
func answerEvery(delay time.Duration) fakellm.Option {
	return fakellm.WithResponder(func(fakellm.Request) fakellm.Step {
		st := fakellm.TextStep("ok")
		st.Delay = delay
		return st
	})
}

// queuedTexts asks the coordinator (through the uncounted client) what
// waits.
func queuedTexts(ctx context.Context, t *testing.T, c client.Client, session string) []string {
	t.Helper()
	return sessionState(ctx, t, c, session).Queued
}

// sessionState is the session coordinator's answer to QuerySession (zero
// while it does not answer).
func sessionState(ctx context.Context, t *testing.T, c client.Client, session string) workflows.SessionState {
	t.Helper()
	var st workflows.SessionState
	v, err := c.QueryWorkflow(ctx, workflows.SessionWorkflowID(session), "", workflows.QuerySession)
	if err != nil {
		return st
	}
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestHandoffMakesNoQueries: a sender learns its turn without asking the
// coordinator's query: a message to a free session, one queued behind a
// running turn and one that interrupts it each take one Update-with-Start
// (the queued one one more update to learn its turn) and no query or
// signal; the interrupting message runs before the queued one.
func TestHandoffMakesNoQueries(t *testing.T) {
	t.Parallel()
	model := fakellm.New(answerEvery(700 * time.Millisecond))
	defer model.Close()
	rt := startRuntime(t, model)
	counter, plain := countCalls(t, rt)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const session = "handoff"
	type outcome struct {
		res workflows.ConversationResult
		err error
	}
	send := func(text string, mode workflows.BusyMode) <-chan outcome {
		out := make(chan outcome, 1)
		go func() {
			in := workflows.TurnInput{SessionID: session, UserMessage: text, Model: fakellm.DefaultModel, Workdir: t.TempDir()}
			res, err := rt.RunMessage(ctx, in, mode, nil)
			out <- outcome{res, err}
		}()
		return out
	}
	first := send("first", workflows.BusyQueue)
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	queued := send("queued", workflows.BusyQueue)
	for len(queuedTexts(ctx, t, plain, session)) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the queued message never showed in the queue")
		}
		time.Sleep(20 * time.Millisecond)
	}
	interrupting := send("interrupting", workflows.BusyInterrupt)
	a, b, c := <-first, <-queued, <-interrupting
	for name, o := range map[string]outcome{"first": a, "queued": b, "interrupting": c} {
		if o.err != nil {
			t.Fatalf("%s: %v", name, o.err)
		}
	}
	if !a.res.Interrupted {
		t.Errorf("the first turn was not interrupted: %+v", a.res)
	}
	if !b.res.Completed || !c.res.Completed {
		t.Errorf("queued %+v, interrupting %+v: want both completed", b.res, c.res)
	}
	if c.res.TurnID != workflows.TurnWorkflowID(session, 2) || b.res.TurnID != workflows.TurnWorkflowID(session, 3) {
		t.Errorf("interrupting ran as %s, queued as %s; want turns 2 and 3", c.res.TurnID, b.res.TurnID)
	}
	if n := counter.queries.Load(); n != 0 {
		t.Errorf("the senders made %d queries, want 0", n)
	}
	if n := counter.signalStarts.Load(); n != 0 {
		t.Errorf("the senders made %d signal-with-starts, want 0", n)
	}
	if n := counter.updateStarts.Load(); n != 3 {
		t.Errorf("the senders made %d update-with-starts, want 3 (one per message)", n)
	}
	if n := counter.updates.Load(); n != 1 {
		t.Errorf("the senders made %d other updates, want 1 (the queued message's turn)", n)
	}
}

// TestScaleBurstOfMessagesAllGetTurns: 200 messages sent at once to one session
// each get their own turn, all 200 run, and no sender queries the
// coordinator. The coordinator here continues as new past 300 events, so
// the burst crosses several runs: senders waiting in the queue are told to
// ask again, and turns running at a switch are carried to the next run.
func TestScaleBurstOfMessagesAllGetTurns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("200 turns take about a minute; make test-scale runs it")
	}
	model := fakellm.New(answerEvery(0))
	defer model.Close()
	rt := startRuntime(t, model)
	counter, plain := countCalls(t, rt)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	const session, messages, limit = "burst", 200, 300
	startCoordinator(ctx, t, plain, session, limit)
	turns := sendAll(ctx, t, rt, session, messages, messages)
	if len(turns) != messages {
		t.Fatalf("%d distinct turns for %d messages", len(turns), messages)
	}
	stored, err := rt.Store.Turns(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != messages {
		t.Fatalf("the store has %d turns, want %d", len(stored), messages)
	}
	if n := counter.queries.Load(); n != 0 {
		t.Errorf("the senders made %d queries, want 0", n)
	}
	runs := coordinatorRuns(ctx, t, plain, session)
	checkBounded(t, runs, limit)
	if len(runs) < 3 {
		t.Errorf("the coordinator ran %d runs, want it to continue as new during the burst", len(runs))
	}
	if !anyCarried(runs) {
		t.Error("no run took over a running turn: the burst never continued as new while busy")
	}
}

// TestScaleCoordinatorHistoryStaysBounded: 500 messages through one session
// (ten senders, fifty messages each, so messages wait while turns run):
// every message gets its turn, and the coordinator continues as new with
// its default limit, each run's history staying under it.
func TestScaleCoordinatorHistoryStaysBounded(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("500 turns take about a minute; make test-scale runs it")
	}
	model := fakellm.New(answerEvery(0))
	defer model.Close()
	rt := startRuntime(t, model)
	_, plain := countCalls(t, rt)
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	const session, messages = "bounded", 500
	turns := sendAll(ctx, t, rt, session, messages, 10)
	if len(turns) != messages {
		t.Fatalf("%d distinct turns for %d messages", len(turns), messages)
	}
	stored, err := rt.Store.Turns(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != messages {
		t.Fatalf("the store has %d turns, want %d", len(stored), messages)
	}
	runs := coordinatorRuns(ctx, t, plain, session)
	checkBounded(t, runs, workflows.DefaultMaxRunEvents)
	if len(runs) < 2 {
		t.Errorf("the coordinator never continued as new (%d events in one run)", runs[0].events)
	}
}

// startCoordinator starts a session's coordinator with a run limit of
// limit events (senders then find it running).
func startCoordinator(ctx context.Context, t *testing.T, c client.Client, session string, limit int) {
	t.Helper()
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.SessionWorkflowID(session), TaskQueue: workflows.TaskQueue},
		workflows.SessionWorkflowName, workflows.SessionInput{SessionID: session, MaxRunEvents: limit})
	if err != nil {
		t.Fatal(err)
	}
}

// sendAll sends messages to session from senders goroutines (each sends
// its share one after the other) and returns the distinct turns they ran
// as; every turn must complete.
func sendAll(ctx context.Context, t *testing.T, rt *Runtime, session string, messages, senders int) map[string]bool {
	t.Helper()
	var mu sync.Mutex
	turns := map[string]bool{}
	var wg sync.WaitGroup
	dir := t.TempDir()
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := s; i < messages; i += senders {
				in := workflows.TurnInput{SessionID: session, UserMessage: fmt.Sprintf("message %d", i), Model: fakellm.DefaultModel, Workdir: dir}
				res, err := rt.RunTurn(ctx, in)
				if err != nil {
					t.Errorf("message %d: %v", i, err)
					return
				}
				if !res.Completed {
					t.Errorf("message %d: turn %s did not complete: %+v", i, res.TurnID, res)
				}
				mu.Lock()
				turns[res.TurnID] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return turns
}

// coordinatorRun is one run of a session's coordinator.
type coordinatorRun struct {
	runID   string
	events  int
	carried bool // it took over a running turn
	next    bool // it continued as new
	// awaited: it waited for a turn in an activity (AwaitTurn); ended:
	// a turn signalled it its end (SignalTurnEnded).
	awaited, ended bool
	// took is the turn it took over; started the turns it started; asked
	// those it asked to report their end (SignalReportEnd).
	took           string
	started, asked []string
	// refused counts the signals it sent that were refused.
	refused int
}

// coordinatorRuns lists the runs of a session's coordinator, newest first.
func coordinatorRuns(ctx context.Context, t *testing.T, c client.Client, session string) []coordinatorRun {
	t.Helper()
	var runs []coordinatorRun
	runID := ""
	for {
		run := coordinatorRun{runID: runID}
		prev := ""
		iter := c.GetWorkflowHistory(ctx, workflows.SessionWorkflowID(session), runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for iter.HasNext() {
			ev, err := iter.Next()
			if err != nil {
				t.Fatal(err)
			}
			run.events++
			if a := ev.GetWorkflowExecutionStartedEventAttributes(); a != nil {
				prev = a.GetContinuedExecutionRunId()
				var in workflows.SessionInput
				if err := json.Unmarshal(a.GetInput().GetPayloads()[0].GetData(), &in); err != nil {
					t.Fatal(err)
				}
				run.carried = in.Running != nil
				if in.Running != nil {
					run.took = in.Running.ID
				}
			}
			if a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
				run.started = append(run.started, a.GetWorkflowId())
			}
			if ev.GetSignalExternalWorkflowExecutionFailedEventAttributes() != nil {
				run.refused++
			}
			if a := ev.GetSignalExternalWorkflowExecutionInitiatedEventAttributes(); a != nil && a.GetSignalName() == workflows.SignalReportEnd {
				run.asked = append(run.asked, a.GetWorkflowExecution().GetWorkflowId())
			}
			if ev.GetWorkflowExecutionContinuedAsNewEventAttributes() != nil {
				run.next = true
			}
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == workflows.AwaitTurnName {
				run.awaited = true
			}
			if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == workflows.SignalTurnEnded {
				run.ended = true
			}
		}
		runs = append(runs, run)
		if prev == "" {
			return runs
		}
		runID = prev
	}
}

// checkBounded fails when a run's history went past limit by more than one
// step of the coordinator's loop, or a run other than the newest did not
// continue as new.
func checkBounded(t *testing.T, runs []coordinatorRun, limit int) {
	t.Helper()
	const step = 100 // events one loop step may add before the check
	for i, r := range runs {
		t.Logf("run %d: %d events, took over a running turn: %v", len(runs)-i, r.events, r.carried)
		if r.events > limit+step {
			t.Errorf("run %d has %d events, want at most %d", len(runs)-i, r.events, limit+step)
		}
		if i > 0 && !r.next {
			t.Errorf("run %d ended without continuing as new", len(runs)-i)
		}
	}
}

// anyCarried reports whether some run took over a running turn.
func anyCarried(runs []coordinatorRun) bool {
	for _, r := range runs {
		if r.carried {
			return true
		}
	}
	return false
}

func TestUpdateID(t *testing.T) {
	t.Parallel()
	if got := updateID(workflows.UpdateDeliver, "abc"); got != "deliver/abc" {
		t.Errorf("updateID = %q", got)
	}
	long := strings.Repeat("r", 500)
	a, b := updateID(workflows.UpdateDeliver, long), updateID(workflows.UpdateDeliver, long+"x")
	if len(a) > maxUpdateID || !strings.HasPrefix(a, "deliver/sha256:") || a == b {
		t.Errorf("long ids: %q, %q", a, b)
	}
}

func TestRetryHandoff(t *testing.T) {
	t.Parallel()
	live := context.Background()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		err    error
		starts bool
		want   bool
	}{
		{"unavailable", live, serviceerror.NewUnavailable("down"), false, true},
		{"not ready", live, serviceerror.NewWorkflowNotReady("later"), false, true},
		{"ctx ended", ended, serviceerror.NewUnavailable("down"), true, false},
		{"coordinator closed, may start", live, serviceerror.NewNotFound("closed"), true, true},
		{"coordinator closed, only waits", live, serviceerror.NewNotFound("closed"), false, false},
		{"refused", live, temporal.NewApplicationError("a message needs a request id", ""), true, false},
		{"coordinator terminated after accepting", live, temporal.NewApplicationError("x", "AcceptedUpdateCompletedWorkflow"), true, true},
		{"invalid", live, serviceerror.NewInvalidArgument("bad"), true, false},
		{"denied", live, serviceerror.NewPermissionDenied("no", ""), true, false},
		{"plain network error", live, errors.New("connection refused"), false, true},
	}
	for _, tt := range tests {
		if got := retryHandoff(tt.ctx, tt.err, tt.starts); got != tt.want {
			t.Errorf("%s: retryHandoff = %v, want %v", tt.name, got, tt.want)
		}
	}
}
