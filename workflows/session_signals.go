package workflows

import (
	"cmp"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Waits are signals (changeTurnEndSignal). The run that starts a turn
// learns of its end as the child's result; a turn asked to (SignalReportEnd,
// by a run about to continue as new: changeTurnEndAsked), or started by a
// run of older code, also signals its end to the coordinator
// (SignalTurnEnded, see reportEnd). The coordinator takes whichever comes
// first, that signal or the child's result, and ignores the other. A run
// that took a turn over from the run before has only the signal. A sender
// that asked (Message.Notify) is a workflow: the coordinator signals it
// the turn its message became when that turn starts or takes the message
// as a steer (SignalTurnStarted), and the turn's result when it ends
// (SignalTurnEnded). Nothing waits in an activity, and nothing polls.

// turnEnded handles a turn's SignalTurnEnded: the end of the running turn,
// the steers that reached the turn that ended last while it reported its
// end (they run next), or a stale signal (a turn whose child result came
// first) to drop.
func (s *session) turnEnded(ctx workflow.Context, res ConversationResult) {
	switch {
	case res.Late && s.last != nil && res.TurnID == s.last.id:
		s.last.lates++
		prefix := fmt.Sprintf("%s/late-steer-%d", res.TurnID, s.last.lates)
		s.queue = append(steerMessages(prefix, res.PendingSteers, s.last.template.Turn), s.queue...)
	case !res.Late && s.running != nil && res.TurnID == s.running.id:
		s.finished(ctx, res)
	}
}

// drainEnded handles the SignalTurnEnded already received, before the run
// ends or continues as new: the running turn's end is not carried as a
// turn still running. It reports whether there were any.
func (s *session) drainEnded(ctx workflow.Context) bool {
	any := false
	for {
		var res ConversationResult
		if !s.ended.ReceiveAsync(&res) {
			return any
		}
		any = true
		s.turnEnded(ctx, res)
	}
}

// probe checks that a carried turn which reports its end is still there
// to report it, when a message is queued behind it or a run takes it
// over: an empty steer, which a turn ignores, is refused by a closed one
// (terminated from outside, it never reports), whose end is then read.
func (s *session) probe(ctx workflow.Context) {
	t := s.running
	if t == nil || t.done != nil || !t.reports || !has(ctx, changeCarriedProbe) {
		return
	}
	if workflow.SignalExternalWorkflow(ctx, t.id, "", SignalSteer, "").Get(ctx, nil) != nil {
		t.closed(ctx)
	}
}

// watch tells the sender of m, when it asked, the turn its message is in
// now (started or steered), and keeps it to tell when that turn ends.
func (s *session) watch(ctx workflow.Context, m Message, how DeliveryOutcome) {
	if !m.Notify || s.running == nil {
		return
	}
	to := cmp.Or(m.Sender, m.RequestID)
	s.running.watchers = append(s.running.watchers, to)
	tell(ctx, []string{to}, SignalTurnStarted, Delivery{RequestID: m.RequestID, Outcome: how, TurnID: s.running.id})
}

// tell signals arg to each workflow, all at once, and waits until each
// signal is delivered or refused (a workflow that ended is not told).
func tell(ctx workflow.Context, workflowIDs []string, signal string, arg any) {
	futures := make([]workflow.Future, 0, len(workflowIDs))
	for _, id := range workflowIDs {
		futures = append(futures, workflow.SignalExternalWorkflow(ctx, id, "", signal, arg))
	}
	for _, f := range futures {
		_ = f.Get(ctx, nil)
	}
}

// closed handles a signal the running turn refused: the turn has closed.
// A carried turn that reports its end sends SignalTurnEnded as it closes;
// one terminated from outside never does, so its end is read once from
// Temporal (AwaitTurn answers at once for a closed turn), whichever comes
// first.
func (t *runningTurn) closed(ctx workflow.Context) {
	if t == nil || t.done != nil {
		return
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second},
	})
	t.done = workflow.ExecuteActivity(actx, AwaitTurnName, t.id)
}
