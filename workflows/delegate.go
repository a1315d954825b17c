package workflows

import (
	"cmp"
	"fmt"
	"slices"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// delegateTaskName is the tool whose calls run as child turns.
const delegateTaskName = "delegate_task"

// Defaults of DelegationSettings.
const (
	DefaultDelegationIterations = 50
	DefaultDelegationDepth      = 2
	DefaultDelegationConcurrent = 3
)

// DelegationSettings bound the sub-agents a turn's delegate_task calls
// start. Zero fields take the defaults when a delegation runs.
type DelegationSettings struct {
	// Depth is the turn's: 0 for a user's turn, 1 for a task's, and so on.
	Depth int `json:",omitempty"`
	// MaxDepth: a turn at this depth or deeper cannot delegate.
	MaxDepth int `json:",omitempty"`
	// MaxConcurrent tasks run at once; the rest wait.
	MaxConcurrent int `json:",omitempty"`
	// MaxIterations is a task's budget when it names none.
	MaxIterations int `json:",omitempty"`
}

// withDefaults fills zero limits. Pure.
func (d DelegationSettings) withDefaults() DelegationSettings {
	if d.MaxDepth <= 0 {
		d.MaxDepth = DefaultDelegationDepth
	}
	if d.MaxConcurrent <= 0 {
		d.MaxConcurrent = DefaultDelegationConcurrent
	}
	if d.MaxIterations <= 0 {
		d.MaxIterations = DefaultDelegationIterations
	}
	return d
}

// mayDelegate: a turn at this depth may start tasks. Pure.
func (d DelegationSettings) mayDelegate() bool { return d.Depth < d.MaxDepth }

// tasksMayDelegate: the tasks of a turn at this depth may start tasks of
// their own. Pure.
func (d DelegationSettings) tasksMayDelegate() bool { return d.Depth+1 < d.MaxDepth }

// NotStarted is the stop reason of a task an interrupt kept from starting.
const NotStarted = "not_started"

// delegates reports whether a batch has a delegate_task call to run. Pure.
func delegates(reply turnapi.CallModelResult, plan []turnapi.CallPlan) bool {
	idx := turnapi.PlanByID(plan)
	return slices.ContainsFunc(reply.ToolCalls, func(c turnapi.ToolCallRef) bool {
		return c.Name == delegateTaskName && idx.Get(c.ID).Action == turnapi.PlanRun
	})
}

// TaskSessionID is the session of task n of the delegate_task calls of a
// turn's model call: the parent's session, the turn and the call it comes
// from. Pure.
func TaskSessionID(sessionID string, turn, call, n int) string {
	return fmt.Sprintf("%s.task%d-%d-%d", sessionID, turn, call, n)
}

// taskJob is one task waiting to run or running.
type taskJob struct {
	call string // the delegate_task call's id
	n    int    // its index among that call's tasks
	in   TurnInput
	f    workflow.ChildWorkflowFuture
}

// runDelegations runs the tasks of the batch's delegate_task calls as
// child turns, at most MaxConcurrent at once, and returns the plan with
// each call answered by its tasks' outcomes in task order (or refused). An
// interrupt of the parent is passed to the running tasks, which end
// interrupted; tasks not started yet are not started.
func runDelegations(ctx, workCtx workflow.Context, in TurnInput, turnID string, st *TurnState, reply turnapi.CallModelResult, plan []turnapi.CallPlan) []turnapi.CallPlan {
	d := in.Delegation.withDefaults()
	idx := turnapi.PlanByID(plan)
	var jobs []*taskJob
	outcomes := map[string][]turnapi.DelegateOutcome{}
	for _, c := range reply.ToolCalls {
		if c.Name != delegateTaskName || idx.Get(c.ID).Action != turnapi.PlanRun {
			continue
		}
		if !d.mayDelegate() {
			idx[c.ID] = turnapi.CallPlan{ID: c.ID, Action: turnapi.PlanRefused,
				Note: fmt.Sprintf("Error: delegation goes %d levels deep at most (delegation.max_depth); do this task yourself.", d.MaxDepth)}
			continue
		}
		var prep turnapi.PrepareDelegationResult
		err := bookkeep(ctx, turnapi.PrepareDelegationName, turnapi.PrepareDelegationInput{
			SessionID: st.Context.session(in.SessionID), AssistantMessageID: reply.MessageID, CallID: c.ID,
			Tools: in.Tools, Delegate: d.tasksMayDelegate(), MaxIterations: d.MaxIterations,
		}).Get(ctx, &prep)
		if err != nil {
			prep.Refusal = "Error: the tasks could not be prepared: " + errorMessage(err)
		}
		if prep.Refusal != "" {
			idx[c.ID] = turnapi.CallPlan{ID: c.ID, Action: turnapi.PlanRefused, Note: prep.Refusal}
			continue
		}
		outcomes[c.ID] = make([]turnapi.DelegateOutcome, len(prep.Tasks))
		for n, t := range prep.Tasks {
			child := taskInput(in, d, st.Context.session(in.SessionID), TaskSessionID(in.SessionID, in.TurnNumber, st.Calls, len(jobs)+1), t)
			child.ReportTo = cmp.Or(in.ReportTo, turnID)
			outcomes[c.ID][n] = turnapi.DelegateOutcome{Goal: t.Goal, SessionID: child.SessionID, StopReason: NotStarted}
			jobs = append(jobs, &taskJob{call: c.ID, n: n, in: child})
		}
	}
	runTasks(ctx, workCtx, jobs, d.MaxConcurrent, st, outcomes)
	// What the tasks spent is the turn's spend too (a goal's --max-cost).
	for _, c := range reply.ToolCalls {
		for _, o := range outcomes[c.ID] {
			st.Usage = st.Usage.Add(o.Usage)
		}
	}
	out := make([]turnapi.CallPlan, 0, len(reply.ToolCalls))
	for _, c := range reply.ToolCalls {
		p := idx.Get(c.ID)
		if o, ok := outcomes[c.ID]; ok {
			p = turnapi.CallPlan{ID: c.ID, Action: turnapi.PlanDelegated, Tasks: o}
		}
		out = append(out, p)
	}
	return out
}

// taskInput is the child turn of task t: the parent's settings, its own
// session, message, budget and tools, one level deeper, under the parent's
// approvals (a command that needs approval waits for a person, who answers
// it where they follow the parent: engine.Waiting).
func taskInput(in TurnInput, d DelegationSettings, parentSession, session string, t turnapi.DelegateTask) TurnInput {
	c := in
	c.Resume, c.ReportEnd = nil, false // a task's turn is its parent's, not a coordinator's
	c.SessionID, c.TurnNumber, c.UserMessage, c.DelegatedFrom = session, 1, t.Message, parentSession
	c.MaxIterations, c.Tools = t.MaxIterations, t.Tools
	c.MemoryReviewEvery = -1
	c.Delegation = d
	c.Delegation.Depth = d.Depth + 1
	return c
}

// runTasks runs jobs as child turns, at most limit at once, recording each
// outcome; an interrupt of workCtx is sent to the running ones and keeps
// the others from starting.
func runTasks(ctx, workCtx workflow.Context, jobs []*taskJob, limit int, st *TurnState, outcomes map[string][]turnapi.DelegateOutcome) {
	var live []*taskJob
	next := 0
	interrupted := st.Interrupted
	for {
		// An interrupt that arrived while the loop was busy (a task ending,
		// an event being recorded) stops the rest from starting.
		if !interrupted && (st.Interrupted || workCtx.Err() != nil) {
			interrupted = true
			for _, j := range live {
				j.f.SignalChildWorkflow(ctx, SignalInterrupt, "the parent turn was interrupted")
			}
		}
		for !interrupted && len(live) < limit && next < len(jobs) {
			j := jobs[next]
			next++
			cctx := workflow.WithChildOptions(ctx, withTurnVisibility(ctx, workflow.ChildWorkflowOptions{
				WorkflowID: TurnWorkflowID(j.in.SessionID, 1), TaskQueue: TaskQueue,
				WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			}, j.in))
			j.f = workflow.ExecuteChildWorkflow(cctx, TurnWorkflowName, j.in)
			live = append(live, j)
			st.note("task %s started", j.in.SessionID)
			o := outcomes[j.call][j.n]
			recordEvent(ctx, turnapi.EventTaskStart, turnapi.TaskEvent{Session: o.SessionID, Goal: o.Goal})
		}
		if len(live) == 0 {
			return
		}
		sel := workflow.NewSelector(ctx)
		var done *taskJob
		for _, j := range live {
			sel.AddFuture(j.f, func(workflow.Future) { done = j })
		}
		if !interrupted {
			sel.AddReceive(workCtx.Done(), func(c workflow.ReceiveChannel, _ bool) {
				c.Receive(ctx, nil)
				interrupted = true
			})
		}
		sel.Select(ctx)
		if done == nil { // the parent was interrupted
			for _, j := range live {
				j.f.SignalChildWorkflow(ctx, SignalInterrupt, "the parent turn was interrupted")
			}
			continue
		}
		var res ConversationResult
		err := done.f.Get(ctx, &res)
		o := taskOutcome(outcomes[done.call][done.n], res, err)
		outcomes[done.call][done.n] = o
		live = slices.DeleteFunc(live, func(j *taskJob) bool { return j == done })
		recordEvent(ctx, turnapi.EventTaskEnd, turnapi.TaskEvent{Session: o.SessionID, Goal: o.Goal, StopReason: o.StopReason})
	}
}

// taskOutcome is how a child turn ended. Pure.
func taskOutcome(o turnapi.DelegateOutcome, res ConversationResult, err error) turnapi.DelegateOutcome {
	if err != nil {
		o.StopReason, o.Error = string(StopError), errorMessage(err)
		return o
	}
	o.StopReason, o.FinalMessageID, o.APICalls, o.Usage = string(res.TurnExitReason), res.FinalMessageID, res.APICalls, res.Usage
	if res.Error != nil {
		o.Error = *res.Error
	}
	return o
}

// skipUndelegated answers the calls of a batch an interrupt stopped during
// its delegation: the delegations with their outcomes, the rest not run.
// Pure.
func skipUndelegated(reply turnapi.CallModelResult, plan []turnapi.CallPlan) []turnapi.CallPlan {
	idx := turnapi.PlanByID(plan)
	out := make([]turnapi.CallPlan, 0, len(reply.ToolCalls))
	for _, c := range reply.ToolCalls {
		p := idx.Get(c.ID)
		if p.Action == turnapi.PlanRun {
			p = turnapi.CallPlan{ID: c.ID, Action: turnapi.PlanSkip, Note: "Not run: the turn was interrupted while its delegated tasks ran."}
		}
		out = append(out, p)
	}
	return out
}
