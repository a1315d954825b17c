package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/talaria-agent/talaria/internal/textline"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// PrepareDelegation reads a delegate_task call from its stored reply and
// makes its tasks ready to run: each task's message, budget and tools (the
// parent's, less what a task never gets, narrowed to the toolsets it
// names). A call that cannot run is answered with its refusal.
func (a *Activities) PrepareDelegation(ctx context.Context, in turnapi.PrepareDelegationInput) (turnapi.PrepareDelegationResult, error) {
	msg, err := a.Store.Message(ctx, in.AssistantMessageID)
	if err != nil {
		return turnapi.PrepareDelegationResult{}, fmt.Errorf("prepare delegation: %w", err)
	}
	i := slices.IndexFunc(msg.ToolCalls, func(tc models.ToolCall) bool { return tc.ID == in.CallID })
	if i < 0 {
		return turnapi.PrepareDelegationResult{}, fmt.Errorf("prepare delegation: message %d has no call %q", in.AssistantMessageID, in.CallID)
	}
	specs, err := tools.DelegateTasks(msg.ToolCalls[i].Function.Arguments, turnapi.MaxDelegatedTasks, turnapi.MaxTaskMessageBytes)
	if err != nil {
		return turnapi.PrepareDelegationResult{Refusal: errorResult(err.Error())}, nil
	}
	base := delegatedTools(a.allowed(in.Tools), in.Delegate)
	var out turnapi.PrepareDelegationResult
	for n, s := range specs {
		task := turnapi.DelegateTask{Goal: textline.Of(s.Goal, 160), Message: taskMessage(s), Tools: base, MaxIterations: s.MaxIterations}
		if task.MaxIterations == 0 || task.MaxIterations > in.MaxIterations {
			task.MaxIterations = in.MaxIterations // delegation.max_iterations bounds a task
		}
		if len(s.Toolsets) > 0 {
			want := tools.ExpandToolsets(s.Toolsets)
			task.Tools = slices.DeleteFunc(slices.Clone(base), func(t string) bool { return !tools.Allows(want, t) })
			if len(task.Tools) == 0 {
				return turnapi.PrepareDelegationResult{Refusal: errorResult(fmt.Sprintf(
					"task %d: none of its toolsets %v is available to a sub-agent here; these are: %s", n+1, s.Toolsets, strings.Join(base, ", ")))}, nil
			}
		}
		out.Tasks = append(out.Tasks, task)
	}
	return out, nil
}

// delegatedTools are the tools a task gets from its parent's: all but
// those tasks never get, and delegate_task itself unless the depth allows
// another level. Never empty: a task without tools keeps todo. Pure.
func delegatedTools(parent []string, delegate bool) []string {
	out := slices.DeleteFunc(slices.Clone(parent), func(t string) bool {
		return slices.Contains(tools.NotDelegated, t) || t == tools.DelegateTaskName && !delegate
	})
	if len(out) == 0 {
		out = []string{"todo"} // an empty list would mean every tool
	}
	return out
}

// taskMessage is a task's user message: its goal, then its context. Pure.
func taskMessage(s tools.TaskSpec) string {
	msg := strings.TrimSpace(s.Goal)
	if c := strings.TrimSpace(s.Context); c != "" {
		msg += "\n\nContext:\n" + c
	}
	return msg
}

// taskReport is one task's entry in a delegate_task result.
type taskReport struct {
	Task        int           `json:"task"`
	Goal        string        `json:"goal"`
	Session     string        `json:"session,omitempty"`
	StopReason  string        `json:"stop_reason"`
	FinalAnswer string        `json:"final_answer,omitempty"`
	Error       string        `json:"error,omitempty"`
	APICalls    int           `json:"api_calls,omitempty"`
	Usage       turnapi.Usage `json:"usage"`
}

// delegationResult is a delegate_task call's result: one report per task,
// in task order, each final answer read from the store and cut to its
// share of the output cap. It is an error when no task completed; a
// store that cannot give an answer fails the call, to be retried.
func (a *Activities) delegationResult(ctx context.Context, id string, outcomes []turnapi.DelegateOutcome) (tools.Result, error) {
	share := max(tools.DefaultMaxOutputChars/max(len(outcomes), 1)-400, 500)
	reports := make([]taskReport, len(outcomes))
	completed := 0
	for i, o := range outcomes {
		r := taskReport{Task: i + 1, Goal: o.Goal, Session: o.SessionID, StopReason: o.StopReason, Error: o.Error, APICalls: o.APICalls, Usage: o.Usage}
		if o.FinalMessageID != 0 {
			m, err := a.Store.Message(ctx, o.FinalMessageID)
			if err != nil {
				return tools.Result{}, fmt.Errorf("the answer of task %d (%s): %w", i+1, o.SessionID, err)
			}
			r.FinalAnswer = clip(strings.TrimSpace(m.Content), share)
		}
		if o.StopReason == "text_response" {
			completed++
		}
		reports[i] = r
	}
	data, err := json.Marshal(map[string]any{"tasks": reports, "completed": completed})
	if err != nil {
		return tools.Result{}, fmt.Errorf("encode the reports: %w", err)
	}
	return tools.Result{CallID: id, Name: tools.DelegateTaskName, Content: string(data), IsError: completed == 0}, nil
}
