package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// TestSteerWhileTheCoordinatorAsks: a coordinator run about to continue as
// new asks its running turn to report its end (SignalReportEnd) and waits
// for the ask's delivery; a steer whose update arrives in that wait is
// signalled to the turn before the run continues, so it reaches the model
// once and is not lost with the run. An interceptor orders the race: the
// ask's future resolves only once a deliver update started after it.
func TestSteerWhileTheCoordinatorAsks(t *testing.T) {
	t.Parallel()
	const session = "steer-during-ask"
	r := startAskRace(t, session, &holdAsk{})
	rt, model, ctx := r.rt, r.model, r.ctx
	// A queued message wakes the coordinator past its limit: it asks.
	if err := r.queue(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, func() bool {
		for _, run := range coordinatorRuns(ctx, t, rt.Client, session) {
			if len(run.asked) > 0 {
				return true
			}
		}
		return false
	})
	if err := rt.Send(ctx, session, workflows.Message{RequestID: "steer-1", Text: "STEER-TEXT", Mode: workflows.BusySteer,
		Turn: workflows.TurnInput{SessionID: session, Model: fakellm.DefaultModel, Workdir: t.TempDir()}}); err != nil {
		t.Fatal(err)
	}
	if err := r.finishFirst(); err != nil {
		t.Fatal(err)
	}
	// The steer reached the turn as it ended (after its last model
	// call): it runs as the session's next message, once.
	defer func() {
		if t.Failed() {
			for i, run := range coordinatorRuns(context.Background(), t, rt.Client, session) {
				t.Logf("run %d: %+v", i, run)
			}
			for _, req := range model.Requests() {
				last, _ := req.LastMessage()
				t.Logf("request %d: last %q", req.Index, last.Content)
			}
		}
	}()
	waitFor(t, time.Minute, func() bool { return steerRequests(model) > 0 })
	waitIdle(t, rt, session)
	if n := steerRequests(model); n != 1 {
		t.Fatalf("%d model requests end with the steer, want 1", n)
	}
}

// TestAskRefusedByAClosedTurn: a turn that closed before the coordinator's
// ask reached it refuses the ask; the asking run takes the child's result
// itself and continues as new with no turn to carry, and the message
// queued behind the turn runs. An interceptor orders the race: the ask
// goes out once the turn has closed.
func TestAskRefusedByAClosedTurn(t *testing.T) {
	t.Parallel()
	const session = "ask-refused"
	r := startAskRace(t, session, &holdAsk{untilTurnEnds: true})
	rt, model, ctx := r.rt, r.model, r.ctx
	err := r.queue()
	if err2 := r.finishFirst(); err == nil {
		err = err2
	}
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, func() bool {
		for _, req := range model.Requests() {
			if last, ok := req.LastMessage(); ok && last.Content == "second" {
				return true
			}
		}
		return false
	})
	waitIdle(t, rt, session)
	runs := coordinatorRuns(ctx, t, rt.Client, session)
	first := runs[len(runs)-1]
	if len(first.asked) != 1 || first.refused != 1 || !first.next || len(runs) < 2 || runs[len(runs)-2].carried {
		t.Fatalf("runs %+v; want the first to ask its turn, continue as new and hand on no turn", runs)
	}
}

// askRace is a session whose coordinator continues as new at its first
// look after its first turn started, while that turn's model call waits.
type askRace struct {
	rt      *Runtime
	model   *fakellm.Server
	ctx     context.Context
	session string
	t       *testing.T
	release func()
	done    chan error
}

// startAskRace starts a runtime with hold among its worker's interceptors,
// the session's coordinator with a small limit, and the turn of "first",
// whose model call waits until finishFirst.
func startAskRace(t *testing.T, session string, hold *holdAsk) *askRace {
	t.Helper()
	gate := make(chan struct{})
	var once, closing sync.Once
	release := func() { closing.Do(func() { close(gate) }) }
	t.Cleanup(release)
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		if last, ok := req.LastMessage(); ok && last.Content == "first" {
			once.Do(func() { <-gate })
		}
		return fakellm.TextStep("ok")
	}))
	t.Cleanup(model.Close)
	rt := startRuntime(t, model, func(_ *config.Config, o *Options) {
		o.Interceptors = []interceptor.WorkerInterceptor{hold}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	startCoordinator(ctx, t, rt.Client, session, 17)
	r := &askRace{rt: rt, model: model, ctx: ctx, session: session, t: t, release: release, done: make(chan error, 1)}
	go func() {
		_, err := rt.RunTurn(ctx, workflows.TurnInput{SessionID: session, UserMessage: "first", Model: fakellm.DefaultModel, Workdir: t.TempDir()})
		r.done <- err
	}()
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	return r
}

// queue sends "second" to queue behind the first turn.
func (r *askRace) queue() error {
	return r.rt.Send(r.ctx, r.session, workflows.Message{Text: "second", Mode: workflows.BusyQueue,
		Turn: workflows.TurnInput{SessionID: r.session, Model: fakellm.DefaultModel, Workdir: r.t.TempDir()}})
}

// finishFirst lets the first turn's model call answer and waits for the turn.
func (r *askRace) finishFirst() error {
	r.release()
	return <-r.done
}

// steerRequests counts the model requests whose last message is the steer.
func steerRequests(model *fakellm.Server) int {
	n := 0
	for _, r := range model.Requests() {
		if last, ok := r.LastMessage(); ok && strings.Contains(last.Content, "STEER-TEXT") {
			n++
		}
	}
	return n
}

// holdAsk holds, in the first coordinator run that asks, the future of
// the report-end ask until a deliver update's handler started after the
// ask: the update arrives while the run waits for the ask's delivery.
// (A replay of that run holds it again, as the first time.)
type holdAsk struct {
	interceptor.WorkerInterceptorBase
	// untilTurnEnds: the ask goes out only once the turn has closed
	// (instead of resolving only after an update).
	untilTurnEnds bool
	mu            sync.Mutex
	runID         string // the run that holds its ask
}

func (h *holdAsk) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	if workflow.GetInfo(ctx).WorkflowType.Name != workflows.SessionWorkflowName {
		return next
	}
	in := &holdAskIn{st: &askState{untilTurnEnds: h.untilTurnEnds, holds: func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		run := workflow.GetInfo(ctx).WorkflowExecution.RunID
		if h.runID == "" {
			h.runID = run
		}
		return h.runID == run
	}}}
	in.Next = next
	return in
}

// askState is one coordinator run's: it asked; an update came after;
// whether it holds its ask.
type askState struct {
	asking, updateAfter bool
	holds               func() bool
	untilTurnEnds       bool
	turn                workflow.ChildWorkflowFuture // the run's last turn
}

type holdAskIn struct {
	interceptor.WorkflowInboundInterceptorBase
	st *askState
}

func (h *holdAskIn) Init(out interceptor.WorkflowOutboundInterceptor) error {
	o := &holdAskOut{st: h.st}
	o.Next = out
	return h.Next.Init(o)
}

func (h *holdAskIn) ExecuteUpdate(ctx workflow.Context, in *interceptor.UpdateInput) (any, error) {
	if h.st.asking && in.Name == workflows.UpdateDeliver {
		h.st.updateAfter = true
	}
	return h.Next.ExecuteUpdate(ctx, in)
}

type holdAskOut struct {
	interceptor.WorkflowOutboundInterceptorBase
	st *askState
}

func (o *holdAskOut) ExecuteChildWorkflow(ctx workflow.Context, childWorkflowType string, args ...any) workflow.ChildWorkflowFuture {
	f := o.Next.ExecuteChildWorkflow(ctx, childWorkflowType, args...)
	if childWorkflowType == workflows.TurnWorkflowName {
		o.st.turn = f
	}
	return f
}

func (o *holdAskOut) SignalExternalWorkflow(ctx workflow.Context, workflowID, runID, signalName string, arg any) workflow.Future {
	if signalName != workflows.SignalReportEnd || !o.st.holds() {
		return o.Next.SignalExternalWorkflow(ctx, workflowID, runID, signalName, arg)
	}
	if o.st.untilTurnEnds {
		_ = o.st.turn.Get(ctx, nil)
		return o.Next.SignalExternalWorkflow(ctx, workflowID, runID, signalName, arg)
	}
	sent := o.Next.SignalExternalWorkflow(ctx, workflowID, runID, signalName, arg)
	o.st.asking = true
	f, set := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		err := sent.Get(ctx, nil)
		_ = workflow.Await(ctx, func() bool { return o.st.updateAfter })
		set.Set(nil, err)
	})
	return f
}
