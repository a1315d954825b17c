package workflows

import "go.temporal.io/sdk/workflow"

// Names of the ways to control and watch a running turn.
const (
	// SignalInterrupt stops the turn: the in-flight model call or tool batch
	// is cancelled and the turn ends interrupted. Payload: a reason string.
	SignalInterrupt = "interrupt"
	// SignalSteer redirects the turn without stopping it. Payload: the text.
	SignalSteer = "steer"
	// QueryProgress returns the turn's Progress.
	QueryProgress = "progress"
)

// Progress is a running turn's live state.
type Progress struct {
	TurnID        string `json:"turn_id"`
	Iteration     int    `json:"iteration"`
	BudgetLeft    int    `json:"budget_left"`
	APICalls      int    `json:"api_calls"`
	CurrentTool   string `json:"current_tool,omitempty"`
	Interrupted   bool   `json:"interrupted"`
	PendingSteers int    `json:"pending_steers"`
	// Steers are the pending steers' texts, oldest first.
	Steers []string   `json:"steers,omitempty"`
	Stop   StopReason `json:"stop,omitempty"`
	// PendingApproval and PendingQuestion are what the turn waits for.
	PendingApproval *PendingApproval `json:"pending_approval,omitempty"`
	PendingQuestion *PendingQuestion `json:"pending_question,omitempty"`
	// Recent are the last steps of the turn, oldest first.
	Recent []string `json:"recent"`
	// ContextTokens is the conversation's size as last reported or
	// estimated; Compactions counts this turn's compactions, and
	// ActiveSessionID is the session the conversation goes on in.
	ContextTokens   int    `json:"context_tokens"`
	Compactions     int    `json:"compactions"`
	ActiveSessionID string `json:"active_session_id,omitempty"`
}

// listen installs the turn's signal and query handlers. Signals only change
// state and cancel in-flight work; the loop acts on them at its safe points.
func listen(ctx workflow.Context, turnID string, st *TurnState, gate *humanGate, cancelWork workflow.CancelFunc) error {
	listenHuman(ctx, gate)
	interrupts := workflow.GetSignalChannel(ctx, SignalInterrupt)
	steers := workflow.GetSignalChannel(ctx, SignalSteer)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(interrupts, func(c workflow.ReceiveChannel, _ bool) {
				var reason string
				c.Receive(ctx, &reason)
				st.Interrupted = true
				cancelWork()
			})
			sel.AddReceive(steers, func(c workflow.ReceiveChannel, _ bool) {
				var text string
				c.Receive(ctx, &text)
				if text != "" {
					st.Steers = append(st.Steers, text)
				}
			})
			sel.Select(ctx)
		}
	})
	return workflow.SetQueryHandler(ctx, QueryProgress, func() (Progress, error) {
		return Progress{
			TurnID: turnID, Iteration: st.Budget.Used, BudgetLeft: st.Budget.Remaining(), APICalls: st.Calls,
			CurrentTool: st.CurrentTool, Interrupted: st.Interrupted, PendingSteers: len(st.Steers), Steers: st.Steers, Stop: st.Stop,
			PendingApproval: gate.approval, PendingQuestion: gate.question, Recent: st.Recent,
			ContextTokens: st.Context.Tokens, Compactions: st.Context.Compactions, ActiveSessionID: st.Context.SessionID,
		}, nil
	})
}

// drainSteers takes the steers that arrived and were not yet delivered.
func drainSteers(ctx workflow.Context, st *TurnState) []string {
	steers := workflow.GetSignalChannel(ctx, SignalSteer)
	for {
		var text string
		if !steers.ReceiveAsync(&text) {
			break
		}
		if text != "" {
			st.Steers = append(st.Steers, text)
		}
	}
	out := st.Steers
	st.Steers = nil
	return out
}

// drainControl applies the interrupts and steers that arrived but were not
// handled yet, so none is lost when the turn continues as new. It first lets
// the signal listener run: a signal can already have been handed to its
// pending receive, where draining the channel does not see it.
func drainControl(ctx workflow.Context, st *TurnState) {
	yieldToHandlers(ctx)
	interrupts := workflow.GetSignalChannel(ctx, SignalInterrupt)
	for {
		var reason string
		if !interrupts.ReceiveAsync(&reason) {
			break
		}
		st.Interrupted = true
	}
	st.Steers = drainSteers(ctx, st)
}

// shouldContinueAsNew: every iterations into a run, or when Temporal
// suggests it; never when every is negative. Pure.
func shouldContinueAsNew(every, iterations int, suggested bool) bool {
	switch {
	case every < 0:
		return false
	case suggested:
		return true
	case every == 0:
		every = DefaultContinueEvery
	}
	return iterations >= every
}

// yieldToHandlers blocks the calling coroutine until every other coroutine
// that can run has run (it schedules nothing: no history events).
func yieldToHandlers(ctx workflow.Context) {
	done := false
	workflow.Go(ctx, func(workflow.Context) { done = true })
	_ = workflow.Await(ctx, func() bool { return done })
}
