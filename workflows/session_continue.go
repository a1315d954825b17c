package workflows

import (
	"maps"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Bounded coordinator history.
//
// A coordinator run (since changeSessionHandoff) continues as new at the
// first safe point of its loop (between two messages, never while it
// starts a turn) where Temporal suggests it or its history holds
// DefaultMaxRunEvents events, whether it is idle, has messages waiting or has a
// turn running. Before it does, the senders waiting for their turn are
// answered with the message's place in the queue (they ask the next run
// again, UpdateAwaitTurn), every update handler has finished
// (workflow.AllHandlersFinished) and the message signals already received
// are queued. An update that reaches the server during the switch is not
// lost: one not yet accepted is retried by the server on the next run;
// one accepted is answered by this run before it ends.
//
// The next run gets the queue, the request-to-turn entries of this run
// (not older ones: each lives for at most two runs) and the running turn,
// if any. A turn is a child workflow whose parent-close policy is
// abandon, so it runs on when the run that started it continues as new.
// The run that started a turn learns of its end as the child's result;
// before it continues as new it asks the turn to signal its end instead
// (SignalReportEnd, changeTurnEndAsked), and the new run waits for that
// signal. (Turns of older runs signalled their end unasked; turns from
// before changeTurnEndSignal are awaited in the AwaitTurn activity, which
// waits for the turn workflow's result with the worker's Temporal client
// and returns what the coordinator needs of it, TurnEnd.) Interrupts and
// steers reach the turn by its workflow id, whichever run sends them.
const (
	// DefaultMaxRunEvents is the history length past which a coordinator run
	// continues as new: replaying it (a worker restart, a cache eviction)
	// stays well under a second, and the run stays far from Temporal's
	// own limits (51,200 events, 50 MB) whatever arrives while a turn runs.
	DefaultMaxRunEvents = 2000
	// AwaitTurnName is the activity a continued coordinator waits on for
	// the end of a turn an earlier run started (registered by the worker
	// that runs SessionWorkflow).
	AwaitTurnName = "AwaitTurn"
)

// assignedKeep is how long the coordinator remembers the turn of a request
// after it started or was last told to its sender: a sender whose answer
// was lost (Temporal away, a poll that timed out) asks again within it.
const assignedKeep = 5 * time.Minute

// Assignment is a request's turn, carried to the next run.
type Assignment struct {
	RequestID, TurnID string
	At                time.Time
}

// recentAssignments are the entries of assigned younger than assignedKeep
// at now, in request id order. Pure.
func recentAssignments(assigned map[string]string, at map[string]time.Time, now time.Time) []Assignment {
	var out []Assignment
	for _, k := range sortedKeys(assigned) {
		if now.Sub(at[k]) < assignedKeep {
			out = append(out, Assignment{RequestID: k, TurnID: assigned[k], At: at[k]})
		}
	}
	return out
}

// CarriedTurn is a running turn a coordinator run hands to the next.
type CarriedTurn struct {
	ID     string
	Number int
	// Template is the message the turn runs (its settings serve the
	// memory review and the steers the turn could not deliver).
	Template Message
	// Reports: the turn signals its end (TurnInput.ReportEnd), so the next
	// run waits for that signal instead of the AwaitTurn activity.
	Reports bool `json:",omitempty"`
	// Watchers are the workflows to tell of its end (Message.Notify).
	Watchers []string `json:",omitempty"`
	// Lates counts the late steer reports of an ended turn (LastEnded).
	Lates int `json:",omitempty"`
}

// TurnEnd is what AwaitTurn reports of a turn's end: the steers it could
// not deliver (they run next). A failed, terminated or vanished turn
// ended without any.
type TurnEnd struct {
	TurnID        string
	PendingSteers []string `json:",omitempty"`
}

// continueDue reports whether a run continues as new now: Temporal
// suggests it, or its history reached limit events. Pure.
func continueDue(suggested bool, events, limit int) bool {
	return suggested || events >= limit
}

// runLimit is the history length a session's runs continue as new at:
// the input's (tests), else DefaultMaxRunEvents. Pure.
func runLimit(in SessionInput) int {
	if in.MaxRunEvents > 0 {
		return in.MaxRunEvents
	}
	return DefaultMaxRunEvents
}

// continueNow reports whether this run continues as new at this point.
func (s *session) continueNow(ctx workflow.Context) bool {
	if !s.handoff {
		return false
	}
	info := workflow.GetInfo(ctx)
	return continueDue(info.GetContinueAsNewSuggested(), info.GetCurrentHistoryLength(), s.limit)
}

// continueAsNew answers the waiting senders, lets every update handler
// finish, queues the signals received and continues as new.
func (s *session) continueAsNew(ctx workflow.Context, msgs workflow.ReceiveChannel) error {
	s.continuing = true
	for {
		if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
			return err
		}
		s.drain(msgs)
		// Asking the turn waits, and so does a turn's end taken here (it
		// tells its watchers): a handler may have started meanwhile, and
		// messages may have come, so the run looks again.
		asked := s.askToReport(ctx)
		if !s.drainEnded(ctx) && !asked {
			break
		}
	}
	return workflow.NewContinueAsNewError(ctx, SessionWorkflowName, s.carry(ctx))
}

// askToReport asks the running turn this run started, which does not
// signal its end (changeTurnEndAsked), to signal it (SignalReportEnd), so
// that the next run learns of it: the child's result reaches only this
// run. A turn that has closed meanwhile refuses the ask; its end is then
// the child's result, taken here. It reports whether it asked (and so
// waited): at most once per turn, since the turn then reports or has ended.
func (s *session) askToReport(ctx workflow.Context) bool {
	t := s.running
	if t == nil || t.reports || t.carried || t.done == nil || !has(ctx, changeTurnEndAsked) {
		return false
	}
	if workflow.SignalExternalWorkflow(ctx, t.id, "", SignalReportEnd, nil).Get(ctx, nil) == nil {
		t.reports = true
		return true
	}
	s.finished(ctx, t.outcome(ctx, t.done))
	return true
}

// carry is the input of the next run.
func (s *session) carry(ctx workflow.Context) SessionInput {
	in := SessionInput{SessionID: s.id, Queue: s.queue, MaxRunEvents: s.input.MaxRunEvents, Idle: s.input.Idle}
	in.Recent = recentAssignments(s.assigned, s.assignedAt, workflow.Now(ctx))
	//workflowcheck:ignore slices.Sorted orders the keys that maps.Keys yields in map order
	owed := slices.Sorted(maps.Keys(s.owed))
	for _, r := range owed {
		if s.pending(r) {
			in.Owed = append(in.Owed, r)
		}
	}
	for _, r := range s.claimOrder {
		in.Claims = append(in.Claims, Claim{RequestID: r, TurnID: s.claims[r]})
	}
	in.Withdrawn = s.withdrawn
	if s.last != nil && s.last.reports {
		in.LastEnded = &CarriedTurn{ID: s.last.id, Number: s.last.number, Template: s.last.template, Lates: s.last.lates}
	}
	if s.running != nil {
		in.Running = &CarriedTurn{ID: s.running.id, Number: s.running.number, Template: s.running.template,
			Reports: s.running.reports, Watchers: s.running.watchers}
	}
	return in
}

// resume takes over a turn an earlier run started and saw running: its end
// comes from its SignalTurnEnded when it reports it, else from the
// AwaitTurn activity (turns started before changeTurnEndSignal).
func (s *session) resume(ctx workflow.Context, t CarriedTurn) *runningTurn {
	if t.Reports {
		r := &runningTurn{id: t.ID, number: t.Number, template: t.Template, carried: true, reports: true, watchers: t.Watchers}
		s.running = r
		s.probe(ctx) // it may have been ended from outside between the runs
		return r
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// A turn may run for hours: the activity heartbeats, and a
		// timed-out attempt is retried like a failed one.
		StartToCloseTimeout: 24 * time.Hour,
		HeartbeatTimeout:    30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second},
	})
	return &runningTurn{id: t.ID, number: t.Number, template: t.Template, carried: true,
		done: workflow.ExecuteActivity(actx, AwaitTurnName, t.ID)}
}

// outcome decodes the end of the running turn from its future: the
// child's result, or what AwaitTurn reports (the steers it could not
// deliver). A failed turn still ends; its outcome is in the store.
func (t *runningTurn) outcome(ctx workflow.Context, f workflow.Future) ConversationResult {
	if t.carried {
		var end TurnEnd
		_ = f.Get(ctx, &end)
		return ConversationResult{TurnID: t.id, PendingSteers: end.PendingSteers}
	}
	var res ConversationResult
	if err := f.Get(ctx, &res); err != nil {
		msg := errorMessage(err)
		res = ConversationResult{Failed: true, TurnExitReason: StopError, Error: &msg}
	}
	return res
}
