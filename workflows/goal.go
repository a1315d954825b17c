package workflows

import (
	"cmp"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// GoalWorkflowName pursues a goal over as many turns as it takes.
const GoalWorkflowName = "GoalWorkflow"

// QueryGoal returns a goal's GoalProgress.
const QueryGoal = "goal"

// GoalWorkflowID is the workflow of the goal pursued in a session.
func GoalWorkflowID(sessionID string) string { return "goal/" + sessionID }

// Goal limits.
const (
	// goalTurnsPerRun: a goal continues as new after this many turns.
	goalTurnsPerRun = 25
	// goalTurnsKept: the progress keeps the last turns only.
	goalTurnsKept = 20
)

// GoalBudget bounds a goal; zero fields do not bound it.
type GoalBudget struct {
	// MaxDuration is the wall time from the goal's start.
	MaxDuration time.Duration `json:",omitempty"`
	// MaxIterations bounds the model calls of all its turns.
	MaxIterations int `json:",omitempty"`
	// MaxCost bounds the spend in USD, from token usage and the prices.
	MaxCost float64 `json:",omitempty"`
	// InputPrice and OutputPrice are USD per million prompt and completion
	// tokens.
	InputPrice  float64 `json:",omitempty"`
	OutputPrice float64 `json:",omitempty"`
}

// GoalInput starts a goal in its own session.
type GoalInput struct {
	SessionID string
	Goal      string
	// Turn is the template of each turn (model, budget per turn, tools,
	// approvals, working directory).
	Turn   TurnInput
	Budget GoalBudget
	// Once: run one turn with Goal as its message and end, without a
	// progress check (a background task).
	Once bool `json:",omitempty"`
	// Deliver are where the outcome goes when it ends (the delivery
	// targets of cron jobs: local, webhook:<url>, home, telegram:<chat>,
	// slack:<channel>, email:<address>).
	Deliver []string `json:",omitempty"`
	// Resume is the progress carried across continue-as-new.
	Resume *GoalProgress `json:",omitempty"`
}

// GoalOutcome says how a goal ended.
type GoalOutcome string

// Goal outcomes.
const (
	GoalDone        GoalOutcome = "done"
	GoalBlocked     GoalOutcome = "blocked"
	GoalBudgetSpent GoalOutcome = "budget_spent"
	GoalInterrupted GoalOutcome = "interrupted"
	GoalFailed      GoalOutcome = "failed"
)

// GoalTurn is one turn of a goal and the check after it.
type GoalTurn struct {
	Number     int        `json:"number"`
	TurnID     string     `json:"turn_id"`
	StopReason StopReason `json:"stop_reason"`
	APICalls   int        `json:"api_calls"`
	Verdict    string     `json:"verdict,omitempty"`
	Reason     string     `json:"reason,omitempty"`
}

// GoalProgress is where a goal stands.
type GoalProgress struct {
	StartedAt time.Time `json:"started_at"`
	// Turns are the last turns (at most goalTurnsKept); TurnCount all.
	Turns      []GoalTurn    `json:"turns"`
	TurnCount  int           `json:"turn_count"`
	Iterations int           `json:"iterations"`
	Usage      turnapi.Usage `json:"usage"`
	CostUSD    float64       `json:"cost_usd"`
	// Running is the turn running now ("" between turns).
	Running string `json:"running,omitempty"`
	// FinalMessageID is the last answer of its turns, in the store.
	FinalMessageID int64 `json:"final_message_id,omitempty"`
}

// GoalResult is how a goal ended.
type GoalResult struct {
	SessionID string      `json:"session_id"`
	Outcome   GoalOutcome `json:"outcome"`
	Reason    string      `json:"reason"`
	GoalProgress
	// Delivered says where the outcome went; DeliveryError what failed.
	Delivered     string `json:"delivered,omitempty"`
	DeliveryError string `json:"delivery_error,omitempty"`
}

// GoalWorkflow pursues a goal: it runs a turn with the goal, asks the model
// whether the goal is reached (JudgeGoal), and runs the next turn in the
// same conversation while the answer is continue and the budget lasts. An
// interrupt signal ends it: the running turn is interrupted too.
func GoalWorkflow(ctx workflow.Context, in GoalInput) (GoalResult, error) {
	ctx = withEpoch(ctx)
	p := GoalProgress{StartedAt: workflow.Now(ctx)}
	if in.Resume != nil {
		p = *in.Resume
	}
	if err := workflow.SetQueryHandler(ctx, QueryGoal, func() (GoalProgress, error) { return p, nil }); err != nil {
		return GoalResult{}, err
	}
	stopped := ""
	var current workflow.ChildWorkflowFuture
	var viaSession *goalTurns
	if has(ctx, changeGoalViaSession) {
		viaSession = newGoalTurns(ctx, in.SessionID)
	}
	interrupts := workflow.GetSignalChannel(ctx, SignalInterrupt)
	workflow.Go(ctx, func(gctx workflow.Context) {
		var reason string
		interrupts.Receive(gctx, &reason)
		stopped = cmp.Or(reason, "stopped")
		switch {
		case current != nil:
			current.SignalChildWorkflow(gctx, SignalInterrupt, stopped)
		case viaSession != nil && p.Running != "":
			interruptTurn(gctx, p.Running, stopped)
		}
	})
	steers := newGoalSteers()
	steers.viaSession = viaSession != nil
	if err := steers.listen(ctx, func() (string, workflow.ChildWorkflowFuture) { return p.Running, current }); err != nil {
		return GoalResult{}, err
	}
	end := func(o GoalOutcome, reason string) (GoalResult, error) {
		p.Running = ""
		steers.handOn(ctx, in, p.TurnCount)
		res := GoalResult{SessionID: in.SessionID, Outcome: o, Reason: reason, GoalProgress: p}
		res.Delivered, res.DeliveryError = deliverGoal(ctx, in, res)
		return res, nil
	}
	for run := 0; ; run++ {
		// A stop that came with the last result is seen before going on.
		yieldToHandlers(ctx)
		if stopped != "" {
			return end(GoalInterrupted, stopped)
		}
		if why := goalBudgetSpent(in.Budget, p, workflow.Now(ctx)); why != "" {
			return end(GoalBudgetSpent, why)
		}
		if run >= goalTurnsPerRun && len(steers.pending) == 0 {
			next := in
			next.Resume = &p
			return GoalResult{}, workflow.NewContinueAsNewError(ctx, GoalWorkflowName, next)
		}
		turn := goalTurn(in, p)
		left, bounded := in.Budget.MaxDuration-workflow.Now(ctx).Sub(p.StartedAt), in.Budget.MaxDuration > 0
		var res ConversationResult
		var err error
		var timeUp bool
		if viaSession != nil {
			res, timeUp, err = viaSession.run(ctx, turn, &p.Running, &stopped, left, bounded)
		} else {
			p.Running = TurnWorkflowID(in.SessionID, turn.TurnNumber)
			if len(steers.pending) > 0 && has(ctx, changeGoalSteers) {
				turn.Steers = steers.take(p.Running)
			}
			cctx := workflow.WithChildOptions(ctx, withTurnVisibility(ctx, workflow.ChildWorkflowOptions{
				WorkflowID: p.Running, TaskQueue: TaskQueue,
				WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			}, turn))
			current = workflow.ExecuteChildWorkflow(cctx, TurnWorkflowName, turn)
			res, err, timeUp = waitTurn(ctx, current, left, bounded)
			current = nil
		}
		if len(res.PendingSteers) > 0 && viaSession == nil && has(ctx, changeGoalSteers) {
			steers.handBack(res.PendingSteers)
		}
		gt := GoalTurn{Number: turn.TurnNumber, TurnID: p.Running, StopReason: res.TurnExitReason, APICalls: res.APICalls}
		p.Running, p.TurnCount = "", turn.TurnNumber
		p.Iterations += res.APICalls
		p.Usage = p.Usage.Add(res.Usage)
		p.CostUSD = goalCost(in.Budget, p.Usage)
		if res.FinalMessageID != 0 {
			p.FinalMessageID = res.FinalMessageID
		}
		if o, why, over := afterGoalTurn(in.Once, turn.TurnNumber, res, err, timeUp, stopped); over {
			if o == GoalBudgetSpent {
				why = cmp.Or(goalBudgetSpent(in.Budget, p, workflow.Now(ctx)), why)
			}
			p.Turns = keepTurns(p.Turns, gt)
			return end(o, why)
		}
		var verdict turnapi.JudgeGoalResult
		err = workflow.ExecuteActivity(modelOptions(ctx, in.Turn.withDefaults(), false), turnapi.JudgeGoalName, turnapi.JudgeGoalInput{
			SessionID: in.SessionID, Goal: in.Goal, Model: in.Turn.Model,
			IdleTimeout: in.Turn.ModelTimeout, MaxRetryAfter: in.Turn.MaxRetryAfter,
		}).Get(ctx, &verdict)
		if err != nil {
			p.Turns = keepTurns(p.Turns, gt)
			return end(GoalFailed, "the progress check failed: "+errorMessage(err))
		}
		gt.Verdict, gt.Reason = verdict.Verdict, verdict.Reason
		p.Usage = p.Usage.Add(verdict.Usage)
		p.CostUSD = goalCost(in.Budget, p.Usage)
		p.Turns = keepTurns(p.Turns, gt)
		switch verdict.Verdict {
		case turnapi.VerdictDone:
			return end(GoalDone, cmp.Or(verdict.Reason, "the goal is reached"))
		case turnapi.VerdictBlocked:
			return end(GoalBlocked, cmp.Or(verdict.Reason, "the work cannot go on without help"))
		}
	}
}

// goalTurn is the next turn of a goal: the goal first, then a request to
// go on; its budget is cut to what the goal's iterations leave (one kept
// for its summary). Pure.
func goalTurn(in GoalInput, p GoalProgress) TurnInput {
	t := in.Turn
	t.Resume = nil
	t.SessionID, t.TurnNumber = in.SessionID, p.TurnCount+1
	t.UserMessage = in.Goal
	if p.TurnCount > 0 {
		t.UserMessage = fmt.Sprintf("Continue working toward the goal (continuation %d). The goal: %s", p.TurnCount, in.Goal)
	}
	if in.Budget.MaxIterations > 0 {
		per := t.MaxIterations
		if per <= 0 {
			per = DefaultMaxIterations
		}
		t.MaxIterations = min(per, in.Budget.MaxIterations-p.Iterations-1)
	}
	return t
}

// goalBudgetSpent says which budget is spent, or "". Pure.
func goalBudgetSpent(b GoalBudget, p GoalProgress, now time.Time) string {
	switch {
	case b.MaxIterations > 0 && b.MaxIterations-p.Iterations < 2:
		return fmt.Sprintf("the goal used %d of its %d model calls (--max-iterations-total): too few are left for another turn", p.Iterations, b.MaxIterations)
	case b.MaxDuration > 0 && now.Sub(p.StartedAt) >= b.MaxDuration:
		return fmt.Sprintf("the goal ran %s, its time budget (--max-hours)", now.Sub(p.StartedAt).Round(time.Second))
	case b.MaxCost > 0 && p.CostUSD >= b.MaxCost:
		return fmt.Sprintf("the goal spent $%.4f, its cost budget of $%.4f (--max-cost)", p.CostUSD, b.MaxCost)
	}
	return ""
}

// goalCost is the spend of usage: what its calls cost at their own
// models' prices (each call's, fallbacks and prompt caching included) when
// the activities priced them, else the tokens at the budget's prices (the
// primary model's). Pure.
func goalCost(b GoalBudget, u turnapi.Usage) float64 {
	if u.CostUSD > 0 {
		return u.CostUSD
	}
	return (float64(u.PromptTokens)*b.InputPrice + float64(u.CompletionTokens)*b.OutputPrice) / 1e6
}

// keepTurns appends t, keeping the last goalTurnsKept. Pure.
func keepTurns(turns []GoalTurn, t GoalTurn) []GoalTurn {
	turns = append(turns, t)
	if len(turns) > goalTurnsKept {
		turns = append([]GoalTurn(nil), turns[len(turns)-goalTurnsKept:]...)
	}
	return turns
}

// derefText is *s, or "" for nil. Pure.
func derefText(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// orPrefix is sep and s, or nothing when s is empty. Pure.
func orPrefix(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}

// deliverGoal sends a goal's outcome to its targets: the last answer in
// full when it is done, else a line saying how it ended. It returns where
// the outcome went and what failed.
func deliverGoal(ctx workflow.Context, in GoalInput, res GoalResult) (string, string) {
	if len(in.Deliver) == 0 {
		return "", ""
	}
	text := fmt.Sprintf("%s %s: %s (%d turns, %d model calls)", goalKind(in), res.Outcome, res.Reason, res.TurnCount, res.Iterations)
	var ref int64
	if res.Outcome == GoalDone {
		ref = res.FinalMessageID
	}
	return deliver(ctx, in.Deliver, turnapi.DeliverInput{JobID: GoalWorkflowID(in.SessionID), JobName: "goal " + in.SessionID,
		Slot: res.StartedAt, Text: text, Status: string(res.Outcome), MessageID: ref})
}

// goalKind names what ran: a background task or a goal. Pure.
func goalKind(in GoalInput) string {
	if in.Once {
		return "Background task " + in.SessionID
	}
	return "Goal " + in.SessionID
}

// waitTurn waits for a goal's turn; with a time budget (bounded), a turn
// still running after left is interrupted, and timeUp says so.
func waitTurn(ctx workflow.Context, turn workflow.ChildWorkflowFuture, left time.Duration, bounded bool) (res ConversationResult, err error, timeUp bool) {
	if bounded {
		tctx, cancelTimer := workflow.WithCancel(ctx)
		defer cancelTimer()
		workflow.Go(tctx, func(g workflow.Context) {
			if workflow.NewTimer(g, left).Get(g, nil) == nil {
				timeUp = true
				turn.SignalChildWorkflow(g, SignalInterrupt, "the goal's time budget (--max-hours) is spent")
			}
		})
	}
	err = turn.Get(ctx, &res)
	return res, err, timeUp
}

// afterGoalTurn says whether a goal ends with the turn just done, and how:
// a failed or interrupted turn ends it (the time budget's interrupt as
// budget_spent), and a task run once ends with its one turn. over is false
// when the progress check decides. Pure.
func afterGoalTurn(once bool, n int, res ConversationResult, err error, timeUp bool, stopped string) (o GoalOutcome, why string, over bool) {
	failed := func(why string) string { return "turn " + fmt.Sprint(n) + " failed: " + why }
	switch {
	case err != nil:
		return GoalFailed, failed(errorMessage(err)), true
	case res.Interrupted && timeUp && stopped == "":
		return GoalBudgetSpent, "the goal's time budget (--max-hours) is spent", true
	case res.Interrupted || stopped != "":
		return GoalInterrupted, cmp.Or(stopped, "the turn was interrupted"), true
	case res.Failed:
		return GoalFailed, failed(derefText(res.Error)), true
	case !once:
		return "", "", false
	case res.Completed:
		return GoalDone, "the task is done", true
	case res.TurnExitReason == StopMaxIterations && res.FinalMessageID != 0:
		return GoalDone, "the task used its iteration budget; its answer is the summary of what it did", true
	}
	return GoalFailed, "the turn ended " + string(res.TurnExitReason) + orPrefix(": ", derefText(res.Error)), true
}
