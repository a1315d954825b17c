package workflows

import (
	"errors"
	"slices"
	"testing"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TestDelegationDepth: with the default depth of 2 a user's turn and its
// tasks may delegate, the tasks' tasks may not; a depth of 1 allows one
// level.
func TestDelegationDepth(t *testing.T) {
	for _, tt := range []struct {
		d            DelegationSettings
		may, tasks   bool
		limit, iters int
	}{
		{DelegationSettings{}, true, true, 3, 50},
		{DelegationSettings{Depth: 1}, true, false, 3, 50},
		{DelegationSettings{Depth: 2}, false, false, 3, 50},
		{DelegationSettings{MaxDepth: 1}, true, false, 3, 50},
		{DelegationSettings{Depth: 1, MaxDepth: 1, MaxConcurrent: 2, MaxIterations: 7}, false, false, 2, 7},
		{DelegationSettings{MaxDepth: 3, Depth: 1}, true, true, 3, 50},
	} {
		d := tt.d.withDefaults()
		if d.mayDelegate() != tt.may || d.tasksMayDelegate() != tt.tasks || d.MaxConcurrent != tt.limit || d.MaxIterations != tt.iters {
			t.Errorf("%+v: may %v, tasks may %v, %d at once, %d iterations", tt.d, d.mayDelegate(), d.tasksMayDelegate(), d.MaxConcurrent, d.MaxIterations)
		}
	}
}

// TestTaskInput: a task's turn is one level deeper, in its own session
// linked to the parent's, unattended, with its own budget and tools.
func TestTaskInput(t *testing.T) {
	parent := TurnInput{SessionID: "boss", TurnNumber: 4, Model: "m", MaxIterations: 90, Tools: []string{"a", "b"},
		Approvals: ApprovalSettings{Mode: ApprovalAsk}, Resume: &TurnCarry{Runs: 2}, Delegation: DelegationSettings{Depth: 0}}
	task := turnapi.DelegateTask{Message: "do it", Tools: []string{"a"}, MaxIterations: 12}
	d := parent.Delegation.withDefaults()
	c := taskInput(parent, d, "boss", TaskSessionID("boss", 4, 1, 2), task)
	if c.SessionID != "boss.task4-1-2" || c.TurnNumber != 1 || c.UserMessage != "do it" || c.DelegatedFrom != "boss" || c.Resume != nil ||
		c.MaxIterations != 12 || !slices.Equal(c.Tools, []string{"a"}) || c.Approvals.Mode != ApprovalAsk || c.MemoryReviewEvery != -1 ||
		c.Delegation.Depth != 1 || c.Model != "m" {
		t.Errorf("task input: %+v", c)
	}
	for _, mode := range []ApprovalMode{ApprovalOff, ApprovalDeny} {
		parent.Approvals.Mode = mode
		if c := taskInput(parent, d, "boss", "s", task); c.Approvals.Mode != mode {
			t.Errorf("approvals %s: the task runs under %q", mode, c.Approvals.Mode)
		}
	}
}

// TestTaskOutcome: a child's result or failure becomes its outcome.
func TestTaskOutcome(t *testing.T) {
	msg := "boom"
	base := turnapi.DelegateOutcome{Goal: "g", SessionID: "s", StopReason: NotStarted}
	if o := taskOutcome(base, ConversationResult{TurnExitReason: StopTextResponse, FinalMessageID: 9, APICalls: 2}, nil); o.StopReason != "text_response" || o.FinalMessageID != 9 || o.APICalls != 2 || o.Goal != "g" {
		t.Errorf("completed: %+v", o)
	}
	if o := taskOutcome(base, ConversationResult{TurnExitReason: StopInterrupted, Error: &msg}, nil); o.StopReason != "interrupted" || o.Error != "boom" {
		t.Errorf("interrupted: %+v", o)
	}
	if o := taskOutcome(base, ConversationResult{}, errors.New("child failed")); o.StopReason != string(StopError) || o.Error == "" {
		t.Errorf("failed: %+v", o)
	}
}
