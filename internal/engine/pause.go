package engine

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
)

// PauseWork stops this process from starting new work until ResumeWork:
// an activity or local activity of the turn worker that starts meanwhile
// waits at its start (the work gate, gateInterceptor), and the scheduler
// skips its ticks (WorkPaused). Activities already running go on
// untouched: a long build or a command with side effects is never
// cancelled by an outage it did not touch. Workflow tasks still run; they
// do no I/O and only schedule activities, which then wait. It reports
// whether it paused (false: already paused).
func (rt *Runtime) PauseWork() bool { return rt.work.pause() }

// ResumeWork lets the activities waiting at the work gate start, and new
// ones start at once again. It reports whether work was paused.
func (rt *Runtime) ResumeWork() bool { return rt.work.resume() }

// WorkPaused reports whether work is paused (PauseWork).
func (rt *Runtime) WorkPaused() bool { return rt.work.paused() }

// workGate holds new work while paused. Its zero value is open.
type workGate struct {
	mu sync.Mutex
	// resumed is closed when work resumes; nil while work is not paused.
	resumed chan struct{}
}

func (g *workGate) pause() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.resumed != nil {
		return false
	}
	g.resumed = make(chan struct{})
	return true
}

func (g *workGate) resume() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.resumed == nil {
		return false
	}
	close(g.resumed)
	g.resumed = nil
	return true
}

func (g *workGate) paused() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.resumed != nil
}

// wait returns when work is not paused or ctx ends, calling beat every
// interval meanwhile (beat nil: never).
func (g *workGate) wait(ctx context.Context, every time.Duration, beat func()) {
	g.mu.Lock()
	resumed := g.resumed
	g.mu.Unlock()
	if resumed == nil {
		return
	}
	var tick <-chan time.Time
	if beat != nil {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-resumed:
			return
		case <-ctx.Done():
			return
		case <-tick:
			beat()
		}
	}
}

// gateBeatEvery is how often an activity waiting at the work gate
// heartbeats, for a heartbeat timeout hb: often enough that the server
// never times it out while it waits. Pure.
func gateBeatEvery(hb time.Duration) time.Duration {
	return max(min(hb/3, time.Second), 50*time.Millisecond)
}

// gateInterceptor is the worker interceptor that makes every activity
// (local ones included) wait at its start while g is paused. A waiting
// activity with a heartbeat timeout heartbeats, so it is neither timed out
// nor moved elsewhere by the server, and learns of a cancel; when its
// context ends (a cancel, its own timeout) it runs at once with that
// context, exactly as if it had started then (an interrupted tool batch
// fails at its start and the turn's AnswerCalls answers its calls). The
// gate only delays a start; it never changes what runs.
func gateInterceptor(g *workGate) interceptor.WorkerInterceptor { return &gateWorker{gate: g} }

type gateWorker struct {
	interceptor.WorkerInterceptorBase
	gate *workGate
}

func (w *gateWorker) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	a := &gateActivity{gate: w.gate}
	a.Next = next
	return a
}

type gateActivity struct {
	interceptor.ActivityInboundInterceptorBase
	gate *workGate
}

func (a *gateActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	var beat func()
	info := activity.GetInfo(ctx)
	if !info.IsLocalActivity && info.HeartbeatTimeout > 0 {
		beat = func() { activity.RecordHeartbeat(ctx) }
	}
	a.gate.wait(ctx, gateBeatEvery(info.HeartbeatTimeout), beat)
	return a.Next.ExecuteActivity(ctx, in)
}
