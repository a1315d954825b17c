package workflows

import (
	"encoding/json"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Names of the human-in-the-loop controls of a running turn.
const (
	// SignalApproval answers a pending approval. Payload: ApprovalDecision.
	SignalApproval = "approval"
	// SignalAnswer answers a pending clarify question. Payload: Answer.
	SignalAnswer = "answer"
)

// ApprovalMode says how dangerous commands are handled.
type ApprovalMode string

// Approval modes.
const (
	// ApprovalAsk waits for a human's decision (default).
	ApprovalAsk ApprovalMode = "ask"
	// ApprovalOff runs dangerous commands without asking (--yolo); blocked
	// commands are still refused.
	ApprovalOff ApprovalMode = "off"
	// ApprovalDeny refuses dangerous commands and answers clarify questions
	// with "no user available": for unattended (scheduled) turns.
	ApprovalDeny ApprovalMode = "deny"
)

// DefaultApprovalTimeout is how long a turn waits for an approval before
// refusing the command.
const DefaultApprovalTimeout = 5 * time.Minute

// NoUserAnswer answers clarify in unattended turns.
const NoUserAnswer = "No user is available to answer right now. Proceed with your best judgment, " +
	"choosing the safest reasonable option, and state the assumption you made."

// strictness orders the modes: deny refuses most, off least.
var strictness = map[ApprovalMode]int{ApprovalOff: 0, ApprovalAsk: 1, ApprovalDeny: 2}

// narrowMode is the mode a turn runs under: the sender's, unless the
// serving worker's policy is stricter. A sender may narrow the serving
// process's policy, never widen it. An empty or unknown policy (a worker
// from before policies existed, recorded in old histories) changes nothing;
// an unknown requested mode counts as ask. Pure.
func narrowMode(requested, policy ApprovalMode) ApprovalMode {
	p, ok := strictness[policy]
	if !ok {
		return requested
	}
	r, ok := strictness[requested]
	if !ok {
		requested, r = ApprovalAsk, strictness[ApprovalAsk]
	}
	if p > r {
		return policy
	}
	return requested
}

// reloadPolicy bounds a continued run as BeginTurn bounds a new one: the
// serving worker's approval mode narrows the input's, and the grants are
// those in the store, whatever the run's input carried.
func reloadPolicy(ctx workflow.Context, in *TurnInput, g *humanGate) error {
	if !has(ctx, changeResumePolicy) {
		return nil
	}
	var p turnapi.TurnPolicyResult
	if err := bookkeep(ctx, turnapi.TurnPolicyName, turnapi.TurnPolicyInput{SessionID: in.SessionID}).Get(ctx, &p); err != nil {
		return err
	}
	in.Approvals.Mode = narrowMode(in.Approvals.Mode, ApprovalMode(p.ApprovalPolicy))
	g.grants = p.Grants
	return nil
}

// ApprovalSettings configure approvals for a turn.
type ApprovalSettings struct {
	Mode ApprovalMode
	// Timeout of one approval wait; the command is refused when it passes.
	Timeout time.Duration
}

// PendingApproval is a dangerous command waiting for a decision.
type PendingApproval struct {
	CallID  string `json:"call_id"`
	Command string `json:"command"`
	Rule    string `json:"rule"`
	Reason  string `json:"reason"`
	// Pattern is what a session or always approval remembers: the
	// normalised command (e.g. "rm -rf ./build").
	Pattern string `json:"pattern,omitempty"`
}

// PendingQuestion is a clarify question waiting for the user's answer.
type PendingQuestion struct {
	CallID   string   `json:"call_id"`
	Question string   `json:"question"`
	Choices  []string `json:"choices,omitempty"`
}

// ApprovalDecision answers a PendingApproval (CallID empty: the pending one).
type ApprovalDecision struct {
	CallID string
	Choice turnapi.ApprovalChoice
}

// Answer answers a PendingQuestion (CallID empty: the pending one).
type Answer struct {
	CallID string
	Text   string
}

// humanGate holds what the turn waits for from a person.
type humanGate struct {
	grants   turnapi.Grants
	approval *PendingApproval
	question *PendingQuestion
	decision *ApprovalDecision
	answer   *Answer
}

// listenHuman receives approval decisions and answers.
func listenHuman(ctx workflow.Context, g *humanGate) {
	decisions := workflow.GetSignalChannel(ctx, SignalApproval)
	answers := workflow.GetSignalChannel(ctx, SignalAnswer)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(decisions, func(c workflow.ReceiveChannel, _ bool) {
				var d ApprovalDecision
				c.Receive(ctx, &d)
				if g.approval != nil && (d.CallID == "" || d.CallID == g.approval.CallID) {
					g.decision = &d
				}
			})
			sel.AddReceive(answers, func(c workflow.ReceiveChannel, _ bool) {
				var a Answer
				c.Receive(ctx, &a)
				if g.question != nil && (a.CallID == "" || a.CallID == g.question.CallID) {
					g.answer = &a
				}
			})
			sel.Select(ctx)
		}
	})
}

// gateDecision is what the approval policy says about one call. Pure.
type gateDecision int

const (
	gateRun gateDecision = iota
	gateRefuse
	gateAsk
)

// approvalGate decides on a terminal call from the mode and the grants.
func approvalGate(mode ApprovalMode, grants turnapi.Grants, c turnapi.ToolCallRef) gateDecision {
	switch {
	case c.Risk.Risk == turnapi.RiskBlocked:
		return gateRefuse
	case c.Risk.Risk != turnapi.RiskDangerous, grants.Allows(c.Risk), mode == ApprovalOff:
		return gateRun
	case mode == ApprovalDeny:
		return gateRefuse
	}
	return gateAsk
}

// applyHumanGates settles, before a batch runs, every call that needs a
// person: blocked commands are refused, dangerous ones wait for approval
// (refused on denial or timeout), clarify questions wait for the answer.
// It returns the updated plan; an interrupt ends the waits.
func applyHumanGates(ctx workflow.Context, in TurnInput, st *TurnState, g *humanGate, r turnapi.CallModelResult, plan []turnapi.CallPlan) []turnapi.CallPlan {
	byID := turnapi.PlanByID(plan)
	out := make([]turnapi.CallPlan, 0, len(r.ToolCalls))
	for _, c := range r.ToolCalls {
		p := byID.Get(c.ID)
		if p.Action == turnapi.PlanRun && !st.Interrupted {
			p = gateCall(ctx, in, st, g, c, p)
		}
		out = append(out, p)
	}
	return out
}

func gateCall(ctx workflow.Context, in TurnInput, st *TurnState, g *humanGate, c turnapi.ToolCallRef, p turnapi.CallPlan) turnapi.CallPlan {
	if c.Name == "clarify" {
		if in.Approvals.Mode == ApprovalDeny {
			return turnapi.CallPlan{ID: c.ID, Action: turnapi.PlanAnswer, Note: NoUserAnswer}
		}
		g.question = &PendingQuestion{CallID: c.ID, Question: c.Question, Choices: c.Choices}
		record := has(ctx, changeHumanEvents)
		if record {
			recordEvent(ctx, turnapi.EventQuestion, turnapi.QuestionEvent{CallID: c.ID, Question: c.Question, Choices: c.Choices}.Bounded())
		}
		_ = workflow.Await(ctx, func() bool { return g.answer != nil || st.Interrupted })
		answer := g.answer
		g.question, g.answer = nil, nil
		if record {
			recordEvent(ctx, turnapi.EventAnswered, turnapi.AnsweredEvent{CallID: c.ID, Answered: answer != nil})
		}
		if answer == nil {
			return turnapi.CallPlan{ID: c.ID, Action: turnapi.PlanSkip, Note: "Cancelled: the turn was interrupted before the user answered."}
		}
		return turnapi.CallPlan{ID: c.ID, Action: turnapi.PlanAnswer, Note: answer.Text}
	}
	switch approvalGate(in.Approvals.Mode, g.grants, c) {
	case gateRun:
		return p
	case gateRefuse:
		return turnapi.CallPlan{ID: c.ID, Action: turnapi.PlanRefused, Note: turnapi.DenialMessage(c.Risk, false)}
	}
	g.approval = &PendingApproval{CallID: c.ID, Command: c.Command, Rule: c.Risk.Rule, Reason: c.Risk.Reason, Pattern: c.Risk.Pattern}
	record := has(ctx, changeHumanEvents)
	if record {
		recordEvent(ctx, turnapi.EventApproval, turnapi.ApprovalEvent{
			CallID: c.ID, Command: c.Command, Rule: c.Risk.Rule, Reason: c.Risk.Reason, Pattern: c.Risk.Pattern,
		}.Bounded())
	}
	ok, _ := workflow.AwaitWithTimeout(ctx, in.Approvals.Timeout, func() bool { return g.decision != nil || st.Interrupted })
	d := g.decision
	g.approval, g.decision = nil, nil
	countApproval(ctx, approvalOutcome(ok, d))
	if d != nil && !d.Choice.Known() && has(ctx, changeUnknownChoice) {
		d = &ApprovalDecision{CallID: d.CallID, Choice: turnapi.ChoiceDeny}
	}
	if record {
		recordEvent(ctx, turnapi.EventApprovalDecided, turnapi.ApprovalDecidedEvent{CallID: c.ID, Choice: decidedChoice(ok, d)})
	}
	if !ok || d == nil || d.Choice == turnapi.ChoiceDeny {
		return turnapi.CallPlan{ID: c.ID, Action: turnapi.PlanRefused, Note: turnapi.DenialMessage(c.Risk, d != nil && d.Choice == turnapi.ChoiceDeny)}
	}
	if d.Choice == turnapi.ChoiceSession || d.Choice == turnapi.ChoiceAlways {
		// The grant covers this command (its pattern), not its whole rule;
		// an assessment recorded before patterns existed keys by rule.
		key := c.Risk.GrantKey()
		g.grants = g.grants.With(d.Choice, key)
		_ = workflow.ExecuteActivity(storeOptions(ctx), turnapi.SaveGrantName, turnapi.SaveGrantInput{
			SessionID: in.SessionID, Choice: d.Choice, Rule: key,
		}).Get(ctx, nil)
	}
	return p
}

// decidedChoice is the Choice of the approval_decided event: what the gate
// does with the command after a wait that ended with ok (false: timed out)
// and decision d (nil: none arrived, the turn was interrupted). A choice
// that is none of the four (left so only by runs before
// changeUnknownChoice) runs the command once, and is reported so. Pure.
func decidedChoice(ok bool, d *ApprovalDecision) string {
	switch {
	case !ok:
		return turnapi.DecidedTimeout
	case d == nil:
		return turnapi.DecidedInterrupted
	case !d.Choice.Known():
		return string(turnapi.ChoiceOnce)
	}
	return string(d.Choice)
}

// recordEvent appends a live event of the turn (kind, payload as JSON)
// through the RecordEvent bookkeeping activity and waits for it, so the
// turn's events keep their order. The events are for display only: one
// that could not be written is logged, and the turn goes on.
func recordEvent(ctx workflow.Context, kind string, payload any) {
	data, err := json.Marshal(payload)
	if err != nil {
		workflow.GetLogger(ctx).Warn("live event not recorded", "kind", kind, "error", err)
		return
	}
	in := turnapi.RecordEventInput{TurnID: workflow.GetInfo(ctx).WorkflowExecution.ID, Kind: kind, Data: string(data)}
	if err := bookkeep(ctx, turnapi.RecordEventName, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("live event not recorded", "kind", kind, "error", err)
	}
	// A task's turn tells the turn its person follows, too.
	if to, _ := ctx.Value(reportToKey{}).(string); to != "" {
		in.TurnID = to
		if err := bookkeep(ctx, turnapi.RecordEventName, in).Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("live event not reported to the parent turn", "kind", kind, "error", err)
		}
	}
}

// reportToKey holds, in a task's turn context, the turn its person follows.
type reportToKey struct{}
