package workflows

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/loop"
)

func TestRunsLocally(t *testing.T) {
	quick := activities.ToolCallRef{ID: "q", Name: "read_file", Quick: true}
	slow := activities.ToolCallRef{ID: "s", Name: "terminal"}
	for _, tt := range []struct {
		name  string
		calls []activities.ToolCallRef
		plan  []activities.CallPlan
		want  bool
	}{
		{"all quick", []activities.ToolCallRef{quick, {ID: "q2", Name: "todo", Quick: true}}, nil, true},
		{"a slow call runs", []activities.ToolCallRef{quick, slow}, nil, false},
		{"a slow call planned to run", []activities.ToolCallRef{slow}, []activities.CallPlan{{ID: "s", Action: activities.PlanRun}}, false},
		{"a slow call refused", []activities.ToolCallRef{quick, slow}, []activities.CallPlan{{ID: "s", Action: activities.PlanRefused}}, true},
		{"a slow call skipped", []activities.ToolCallRef{slow}, []activities.CallPlan{{ID: "s", Action: activities.PlanSkip}}, true},
		{"unknown tool answered", []activities.ToolCallRef{{ID: "u", Name: "nope", Unknown: true}}, []activities.CallPlan{{ID: "u", Action: activities.PlanUnknown}}, true},
		{"clarify answered", []activities.ToolCallRef{{ID: "c", Name: "clarify"}}, []activities.CallPlan{{ID: "c", Action: activities.PlanAnswer}}, true},
	} {
		if got := runsLocally(activities.CallModelResult{ToolCalls: tt.calls}, tt.plan); got != tt.want {
			t.Errorf("%s: runsLocally = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestQuickBatchFailureTakesTheActivityPath: a quick batch whose local
// activity fails is run again as an activity, and the turn goes on.
func TestQuickBatchFailureTakesTheActivityPath(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	Register(env)
	(&activities.Activities{}).Register(env)
	model := &scriptedModel{replies: []activities.CallModelResult{
		{ToolCalls: []activities.ToolCallRef{{ID: "c1", Name: "read_file", Quick: true}}, FinishReason: "tool_calls", Kind: loop.ReplyToolCalls},
		textReply(),
	}}
	env.OnActivity(activities.BeginTurnName, mock.Anything, mock.Anything).Return(activities.BeginTurnResult{UserMessageID: 1}, nil)
	env.OnActivity(activities.CallModelName, mock.Anything, mock.Anything).Return(model.call)
	var local []bool
	env.OnActivity(activities.ExecuteToolsName, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ activities.ExecuteToolsInput) (activities.ExecuteToolsResult, error) {
			local = append(local, activity.GetInfo(ctx).IsLocalActivity)
			if len(local) == 1 {
				return activities.ExecuteToolsResult{}, errors.New("the store is locked")
			}
			return activities.ExecuteToolsResult{ResultMessageIDs: []int64{7}}, nil
		})
	env.OnActivity(activities.FinishTurnName, mock.Anything, mock.Anything).Return(activities.FinishTurnResult{FinalResponse: "done", HasFinal: true}, nil)
	env.ExecuteWorkflow(TurnWorkflowName, TurnInput{SessionID: "s", TurnNumber: 1, UserMessage: "hi", Model: "m"})
	var res ConversationResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(local) != 2 || !local[0] || local[1] || !res.Completed || res.APICalls != 2 {
		t.Fatalf("batches ran locally: %v (want [true false]), result %+v", local, res)
	}
}
