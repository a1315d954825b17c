package workflows

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

func TestRunsLocally(t *testing.T) {
	quick := turnapi.ToolCallRef{ID: "q", Name: "read_file", Quick: true}
	slow := turnapi.ToolCallRef{ID: "s", Name: "terminal"}
	for _, tt := range []struct {
		name  string
		calls []turnapi.ToolCallRef
		plan  []turnapi.CallPlan
		want  bool
	}{
		{"all quick", []turnapi.ToolCallRef{quick, {ID: "q2", Name: "todo", Quick: true}}, nil, true},
		{"a slow call runs", []turnapi.ToolCallRef{quick, slow}, nil, false},
		{"a slow call planned to run", []turnapi.ToolCallRef{slow}, []turnapi.CallPlan{{ID: "s", Action: turnapi.PlanRun}}, false},
		{"a slow call refused", []turnapi.ToolCallRef{quick, slow}, []turnapi.CallPlan{{ID: "s", Action: turnapi.PlanRefused}}, true},
		{"a slow call skipped", []turnapi.ToolCallRef{slow}, []turnapi.CallPlan{{ID: "s", Action: turnapi.PlanSkip}}, true},
		{"unknown tool answered", []turnapi.ToolCallRef{{ID: "u", Name: "nope", Unknown: true}}, []turnapi.CallPlan{{ID: "u", Action: turnapi.PlanUnknown}}, true},
		{"clarify answered", []turnapi.ToolCallRef{{ID: "c", Name: "clarify"}}, []turnapi.CallPlan{{ID: "c", Action: turnapi.PlanAnswer}}, true},
	} {
		if got := runsLocally(turnapi.CallModelResult{ToolCalls: tt.calls}, tt.plan); got != tt.want {
			t.Errorf("%s: runsLocally = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestQuickBatchFailureTakesTheActivityPath: a quick batch whose local
// activity fails is run again as an activity, and the turn goes on.
func TestQuickBatchFailureTakesTheActivityPath(t *testing.T) {
	env := newTestEnv()
	Register(env)
	(&activities.Activities{}).Register(env)
	model := &scriptedModel{replies: []turnapi.CallModelResult{
		{ToolCalls: []turnapi.ToolCallRef{{ID: "c1", Name: "read_file", Quick: true}}, FinishReason: "tool_calls", Kind: loop.ReplyToolCalls},
		textReply(),
	}}
	env.OnActivity(turnapi.BeginTurnName, mock.Anything, mock.Anything).Return(turnapi.BeginTurnResult{UserMessageID: 1}, nil)
	env.OnActivity(turnapi.CallModelName, mock.Anything, mock.Anything).Return(model.call)
	var local []bool
	env.OnActivity(turnapi.ExecuteToolsName, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ turnapi.ExecuteToolsInput) (turnapi.ExecuteToolsResult, error) {
			local = append(local, activity.GetInfo(ctx).IsLocalActivity)
			if len(local) == 1 {
				return turnapi.ExecuteToolsResult{}, errors.New("the store is locked")
			}
			return turnapi.ExecuteToolsResult{ResultMessageIDs: []int64{7}}, nil
		})
	env.OnActivity(turnapi.FinishTurnName, mock.Anything, mock.Anything).Return(turnapi.FinishTurnResult{FinalResponse: "done", HasFinal: true}, nil)
	env.ExecuteWorkflow(TurnWorkflowName, TurnInput{SessionID: "s", TurnNumber: 1, UserMessage: "hi", Model: "m"})
	var res ConversationResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(local) != 2 || !local[0] || local[1] || !res.Completed || res.APICalls != 2 {
		t.Fatalf("batches ran locally: %v (want [true false]), result %+v", local, res)
	}
}
