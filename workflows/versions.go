package workflows

import "go.temporal.io/sdk/workflow"

// Change ids for workflow.GetVersion. A change to workflow code that alters
// the commands it issues gets one, so turns already in flight keep replaying
// the old path (see docs/architecture.md, "Changing loop code").
const (
	// changeLocalActivities: batches of quick tools and the store
	// bookkeeping (BeginTurn, FinishTurn, ReserveTurn) run as local
	// activities (version 1) instead of activities (DefaultVersion).
	changeLocalActivities = "local-activities"
	// changeResumePolicy: a continued run asks the serving worker for its
	// approval mode and the store for the grants (version 1) instead of
	// trusting those its input carries (DefaultVersion).
	changeResumePolicy = "resume-policy"
	// changeAnswerCalls: a tool batch that ended with an error (interrupted
	// or failed) is followed by the AnswerCalls bookkeeping activity, which
	// answers every call left without a result (version 1); before, such
	// calls stayed unanswered (DefaultVersion).
	changeAnswerCalls = "answer-calls"
	// changeArgsFeedback: a tool call whose arguments end mid-JSON in a
	// reply the model finished (not cut off by the output limit) takes the
	// invalid-arguments path: re-asked silently, then answered with an
	// error the model can correct (version 1); before, it was re-asked with
	// max_tokens doubled and then ended the turn truncated (DefaultVersion).
	changeArgsFeedback = "invalid-args-feedback"
	// changeSessionHandoff: the session coordinator continues as new when
	// Temporal suggests it or past DefaultMaxRunEvents, also while a turn runs or
	// messages wait, carrying its queue and its running turn (version 1);
	// before, it continued as new only when idle after turnsPerRun turns
	// (DefaultVersion). Messages delivered by update (UpdateDeliver) are
	// handled by both.
	changeSessionHandoff = "session-handoff"
	// changeTurnVisibility: a turn child workflow starts with a summary and
	// details for the Web UI and, when the worker found them registered,
	// the TalariaSessionId search attribute; a turn that has it records
	// TalariaStopReason when it ends (version 1). Before, neither
	// (DefaultVersion). See visibility.go.
	changeTurnVisibility = "turn-visibility"
	// changeUnknownChoice: an approval decision whose choice is none of
	// once, session, always or deny (only a raw signal can carry one) denies
	// the command (version 1); before, it ran the command once
	// (DefaultVersion). Asked only on that path, so no other history
	// records the marker.
	changeUnknownChoice = "unknown-choice-denies"
	// changeIdleQueue: the coordinator about to end (idle, or an older run
	// due to continue as new) goes on with a message an update handler
	// queued meanwhile instead of waiting for that handler, which waits for
	// the message's turn to start (version 1); before, it waited for both:
	// a deadlock (DefaultVersion). Only a run that queued such a message
	// reaches the GetVersion call (settleHandlers), so no other history
	// changes.
	changeIdleQueue = "idle-queue"
	// changeHumanEvents: a turn that waits on a person records live events
	// through the RecordEvent bookkeeping activity (version 1): approval
	// when a command starts waiting for a decision and approval_decided
	// when that wait ends, question and answered around a clarify
	// question's wait; before, it recorded none (DefaultVersion). Asked
	// only where a turn starts such a wait, so no other history records the
	// marker.
	changeHumanEvents = "human-events"
	// changeSteerUndelivered: a steer the coordinator could not signal to
	// its running turn (the turn had just ended) becomes the session's next
	// message, and its sender is answered with that turn (version 1);
	// before, it was dropped although its sender was told "steered"
	// (DefaultVersion). Asked only when the signal failed, so no other
	// history records the marker.
	changeSteerUndelivered = "steer-undelivered"
	// changeGoalSteers: steers a goal's turn hands back, and those the
	// goal holds (UpdateGoalSteer), start its next turn, and those left when
	// it ends are sent to the session's coordinator (version 1); before,
	// a goal dropped them (DefaultVersion). Asked only when a goal holds
	// steers, so no other history records the marker.
	changeGoalSteers = "goal-steers"
	// changeReplyHeartbeat: a chat reply (ChatReply, which heartbeats
	// between parts) has a 30 s heartbeat timeout, so a reply whose gateway
	// died mid-way is retried within seconds (version 1); before, only its
	// 10-minute start-to-close timeout moved it on (DefaultVersion).
	changeReplyHeartbeat = "reply-heartbeat"
	// changeTurnEndSignal: waits are signals (version 1). A turn the
	// session's coordinator starts (TurnInput.ReportEnd) tells the
	// coordinator of its end by signal (SignalTurnEnded, in the workflow
	// task that completes it), and the coordinator tells the senders that
	// asked (Message.Notify) when their turn starts and ends; a chat
	// message's workflow waits for those signals. Before (DefaultVersion),
	// a coordinator run that took a running turn over from the run before
	// waited for its end in an activity (AwaitTurn), and a chat message's
	// workflow in a 30-day activity (ChatAwaitTurn).
	changeTurnEndSignal = "turn-end-signal"
	// changeGoalViaSession: a goal run sends each turn's message to the
	// session's coordinator and is told the turn's start and end by
	// signal; steers reach its turns through the coordinator (version 1,
	// see goal_session.go). Before (DefaultVersion), a goal ran its turns
	// as its own children beside the coordinator and held steers itself.
	// Asked once, as a goal run starts.
	changeGoalViaSession = "goal-via-session"
	// changeCarriedProbe: a coordinator run that takes over a turn which
	// reports its end checks it is still there, as the run starts and when
	// a message is queued behind it (an empty steer, which a closed turn
	// refuses), so a turn terminated from outside does not leave the
	// session waiting (version 1). Asked only for such a turn.
	changeCarriedProbe = "carried-probe"
	// changeFollowEnds: a chat message's workflow cancels its follow
	// (ChatFollow) at the turn's end and replies at once; the reply stops
	// the follow in the gateway's process before it edits the draft
	// (version 1). Before, it waited for the cancellation, which reaches
	// the activity only with its next heartbeat, seconds later
	// (DefaultVersion).
	changeFollowEnds = "follow-ends"
	// changeMemorySync: after a turn whose template asks for it
	// (TurnInput.MemorySync: an external memory provider is on) answers,
	// the coordinator starts MemorySyncWorkflow, which records the turn with
	// the provider off the reply's path (version 1). Before, nothing was
	// recorded (DefaultVersion). Asked only for such turns, so no other
	// history records the marker.
	changeMemorySync = "memory-sync"
	// changeCronMemorySync: after a scheduled job's turn whose template
	// asks for it (TurnInput.MemorySync) answers, the run starts
	// MemorySyncWorkflow for it, as a coordinator does for its turns
	// (version 1). Before, a job's turns were not recorded
	// (DefaultVersion). Asked only for such turns, so no other history
	// records the marker.
	changeCronMemorySync = "cron-memory-sync"
	// changeTurnEndAsked: a turn the coordinator starts tells it of its
	// end by signal only when a coordinator run asks it to
	// (SignalReportEnd), which a run does before it continues as new with
	// the turn running; the run that started it learns of its end as the
	// child's result (version 1). Before, every such turn signalled its
	// end and waited for the signal's delivery: one workflow task more in
	// the turn and one in the coordinator, for each turn (DefaultVersion).
	changeTurnEndAsked = "turn-end-asked"
)

// changeEpoch is asked once, as the first step of a run of the hot
// workflows (withEpoch: a turn, a session's coordinator, a chat message's
// and a goal's workflow, which ask for two to four changes each; a cron
// run asks for one at most and does without). A run that records its
// version 1 started on code that has every change of epoch1, and has()
// answers for those without a marker of their own. Each marker is a
// history event, and the SDK also upserts the TemporalChangeVersion search
// attribute (a visibility write, with the list of every change so far):
// one marker per run instead of up to four took 8-10 % off serve's CPU for
// a burst of turns (docs/benchmarks.md). A run without it (it started on
// older code, or a history recorded before) asks for each change as before.
//
// A change added later is in no epoch: it is asked for with its own
// marker, until the next version of changeEpoch folds it in (has() then
// compares the run's epoch with the change's). Version 2 folds in the
// changes made after version 1 that the workflows asking for the epoch
// use (epoch2; a cron run asks for no epoch, so cron-memory-sync keeps
// its own marker).
const changeEpoch = "epoch"

// latestEpoch is the version of changeEpoch a run records now.
const latestEpoch workflow.Version = 2

// epoch1 are the changes a run with version 1 of changeEpoch has.
var epoch1 = map[string]bool{
	changeLocalActivities: true, changeResumePolicy: true, changeAnswerCalls: true, changeArgsFeedback: true,
	changeSessionHandoff: true, changeTurnVisibility: true, changeUnknownChoice: true, changeIdleQueue: true,
	changeHumanEvents: true, changeSteerUndelivered: true, changeGoalSteers: true, changeReplyHeartbeat: true,
	changeTurnEndSignal: true, changeGoalViaSession: true, changeCarriedProbe: true, changeFollowEnds: true,
}

// epoch2 are the changes version 2 of changeEpoch adds to epoch1.
var epoch2 = map[string]bool{
	changeMemorySync: true, changeTurnEndAsked: true,
}

// epochOf is the version of changeEpoch whose runs have change without a
// marker of its own; 0 for a change in no epoch yet. Pure.
func epochOf(change string) workflow.Version {
	switch {
	case epoch1[change]:
		return 1
	case epoch2[change]:
		return 2
	}
	return 0
}

// epochKey is the context key of a run's epoch (withEpoch).
type epochKey struct{}

// withEpoch asks for changeEpoch and keeps the answer in the returned
// context. It must be a run's first step, before any command: only then
// does a run that began on older code (its first task replayed) answer
// DefaultVersion, wherever it is now.
func withEpoch(ctx workflow.Context) workflow.Context {
	return workflow.WithValue(ctx, epochKey{}, workflow.GetVersion(ctx, changeEpoch, workflow.DefaultVersion, latestEpoch))
}

// inheritEpoch is ctx (a handler's, which the SDK derives from the run's
// root context) with the epoch of from (the run's).
func inheritEpoch(from, ctx workflow.Context) workflow.Context {
	if v, ok := from.Value(epochKey{}).(workflow.Version); ok {
		return workflow.WithValue(ctx, epochKey{}, v)
	}
	return ctx
}

// has reports whether this run has change (its version 1): without a
// marker when the run's epoch includes it, else by its own marker.
func has(ctx workflow.Context, change string) bool {
	if v, ok := ctx.Value(epochKey{}).(workflow.Version); ok {
		if e := epochOf(change); e > 0 && v >= e {
			return true
		}
	}
	return workflow.GetVersion(ctx, change, workflow.DefaultVersion, 1) >= 1
}
