package turnapi

// PrepareDelegationName reads and checks a delegate_task call's tasks.
const PrepareDelegationName = "PrepareDelegation"

// PlanDelegated answers a delegate_task call with the outcomes of its
// tasks (CallPlan.Tasks), which ran as child turns.
const PlanDelegated PlanAction = "delegated"

// Bounds of a delegation.
const (
	// MaxDelegatedTasks bounds the tasks of one delegate_task call.
	MaxDelegatedTasks = 8
	// MaxTaskMessageBytes bounds a task's message (goal and context).
	MaxTaskMessageBytes = 8 << 10
)

// PrepareDelegationInput names a delegate_task call of a stored reply and
// what its tasks may use.
type PrepareDelegationInput struct {
	SessionID          string
	AssistantMessageID int64
	CallID             string
	// Tools are the parent turn's tools (empty: all the worker offers).
	Tools []string `json:",omitempty"`
	// Delegate: the children may delegate in turn (the depth allows it).
	Delegate bool
	// MaxIterations is a task's budget when it names none.
	MaxIterations int
}

// DelegateTask is one task, ready to run as a child turn.
type DelegateTask struct {
	// Goal is the task's goal, cut for display.
	Goal string
	// Message is the child turn's user message: the goal and its context.
	Message string
	// Tools are the child's tools.
	Tools         []string
	MaxIterations int
}

// PrepareDelegationResult is a call's tasks, or why it is refused.
type PrepareDelegationResult struct {
	Tasks   []DelegateTask `json:",omitempty"`
	Refusal string         `json:",omitempty"`
}

// DelegateOutcome is how one task ended; its final answer is in the store.
type DelegateOutcome struct {
	Goal      string
	SessionID string
	// StopReason is the child turn's, or "not_started" for a task the
	// parent's interrupt kept from starting.
	StopReason     string
	FinalMessageID int64  `json:",omitempty"`
	APICalls       int    `json:",omitempty"`
	Usage          Usage  `json:",omitempty"`
	Error          string `json:",omitempty"`
}
