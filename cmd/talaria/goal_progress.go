package main

import (
	"context"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/talaria-agent/talaria"
)

// goalPollInterval is how often a goal's progress is asked for the turn it
// runs.
const goalPollInterval = 250 * time.Millisecond

// goalDrain bounds how long the turns a goal ended with are still followed
// once it has ended (their events are all stored by then).
const goalDrain = 3 * time.Second

// goalFollower shows a goal's turns as they run, one after another, as
// chat shows its turn: each tool's start and end, waits and delegated
// tasks, on w (stderr), never the reply text (the goal's answer is printed
// when it ends).
type goalFollower struct {
	rt       *talaria.Runtime
	session  string
	printer  *streamPrinter
	followed map[string]bool
}

// followGoalTurns starts following the goal of session. fromStart follows
// every turn from the first; otherwise the turns that had ended before are
// left out. finish, called with the goal's last progress once it ended,
// shows the rest of its turns and stops.
func followGoalTurns(ctx context.Context, rt *talaria.Runtime, session string, w io.Writer, fromStart bool) (finish func(final talaria.GoalProgress)) {
	f := &goalFollower{rt: rt, session: session, followed: map[string]bool{},
		printer: &streamPrinter{out: io.Discard, errOut: w}}
	loopCtx, cancel := context.WithCancel(ctx)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		first := true
		for {
			if p, err := rt.GoalProgress(loopCtx, session); err == nil {
				if first && !fromStart {
					for _, t := range p.Turns {
						f.followed[t.TurnID] = true
					}
				}
				first = false
				f.follow(loopCtx, p)
			}
			select {
			case <-stop:
				return
			case <-loopCtx.Done():
				return
			case <-time.After(goalPollInterval):
			}
		}
	}()
	var once sync.Once
	return func(final talaria.GoalProgress) {
		once.Do(func() {
			close(stop)
			select {
			case <-done:
			case <-time.After(goalDrain):
			}
			cancel()
			<-done
			dctx, dcancel := context.WithTimeout(ctx, goalDrain)
			defer dcancel()
			f.follow(dctx, final)
		})
	}
}

// follow shows the turns of p not yet shown, in order, each until its
// last event.
func (f *goalFollower) follow(ctx context.Context, p talaria.GoalProgress) {
	for _, id := range turnsToFollow(p, f.followed) {
		for ev := range talaria.TailEvents(ctx, f.rt.Store, id, 0, 50*time.Millisecond) {
			f.show(ev)
		}
		if ctx.Err() != nil {
			return
		}
		f.followed[id] = true
	}
}

// show passes an event to the printer, but not the reply's text.
func (f *goalFollower) show(ev talaria.Event) {
	if ev.Kind == talaria.KindDelta || ev.Kind == talaria.KindReasoning {
		return
	}
	f.printer.onEvent(ev)
}

// turnsToFollow are the turns of a goal's progress not in followed: the
// ended ones by number, then the running one. Pure.
func turnsToFollow(p talaria.GoalProgress, followed map[string]bool) []string {
	ended := append([]talaria.GoalTurn(nil), p.Turns...)
	sort.SliceStable(ended, func(i, j int) bool { return ended[i].Number < ended[j].Number })
	var out []string
	seen := map[string]bool{}
	for _, t := range ended {
		if t.TurnID != "" && !followed[t.TurnID] && !seen[t.TurnID] {
			out = append(out, t.TurnID)
			seen[t.TurnID] = true
		}
	}
	if p.Running != "" && !followed[p.Running] && !seen[p.Running] {
		out = append(out, p.Running)
	}
	return out
}

// syncWriter serialises the writes of the goroutines that share w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
