package workflows

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/loop"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// scriptedModel answers CallModel from a list of replies, recording inputs.
type scriptedModel struct {
	replies []turnapi.CallModelResult
	errs    []error
	inputs  []turnapi.CallModelInput
}

func (m *scriptedModel) call(_ context.Context, in turnapi.CallModelInput) (turnapi.CallModelResult, error) {
	i := len(m.inputs)
	m.inputs = append(m.inputs, in)
	if i < len(m.errs) && m.errs[i] != nil {
		return turnapi.CallModelResult{}, m.errs[i]
	}
	if i >= len(m.replies) {
		return m.replies[len(m.replies)-1], nil
	}
	r := m.replies[i]
	r.MessageID = int64(100 + i)
	return r, nil
}

func toolReply(name string) turnapi.CallModelResult {
	return turnapi.CallModelResult{ToolCalls: []turnapi.ToolCallRef{{ID: "c1", Name: name}}, FinishReason: "tool_calls", Kind: loop.ReplyToolCalls,
		Usage: turnapi.Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}}
}

func textReply() turnapi.CallModelResult {
	return turnapi.CallModelResult{TextChars: 4, FinishReason: "stop", Kind: loop.ReplyText,
		Usage: turnapi.Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}}
}

type turnRun struct {
	result    ConversationResult
	model     *scriptedModel
	toolRuns  []turnapi.ExecuteToolsInput
	finished  turnapi.FinishTurnInput
	beginning turnapi.BeginTurnInput
}

func runTurn(t *testing.T, in TurnInput, model *scriptedModel) turnRun {
	t.Helper()
	env := newTestEnv()
	Register(env)
	(&activities.Activities{}).Register(env)
	var run turnRun
	run.model = model
	env.OnActivity(turnapi.BeginTurnName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in turnapi.BeginTurnInput) (turnapi.BeginTurnResult, error) {
			run.beginning = in
			return turnapi.BeginTurnResult{UserMessageID: 1}, nil
		})
	env.OnActivity(turnapi.CallModelName, mock.Anything, mock.Anything).Return(model.call)
	env.OnActivity(turnapi.ExecuteToolsName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in turnapi.ExecuteToolsInput) (turnapi.ExecuteToolsResult, error) {
			run.toolRuns = append(run.toolRuns, in)
			return turnapi.ExecuteToolsResult{ResultMessageIDs: []int64{int64(500 + len(run.toolRuns))}}, nil
		})
	env.OnActivity(turnapi.FinishTurnName, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in turnapi.FinishTurnInput) (turnapi.FinishTurnResult, error) {
			run.finished = in
			if len(in.FinalParts) == 0 {
				return turnapi.FinishTurnResult{}, nil
			}
			return turnapi.FinishTurnResult{FinalResponse: "done", HasFinal: true}, nil
		})
	env.ExecuteWorkflow(TurnWorkflowName, in)
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	if err := env.GetWorkflowResult(&run.result); err != nil {
		t.Fatalf("decode result: %v", err)
	}
	return run
}

func TestTurnTextAnswer(t *testing.T) {
	run := runTurn(t, TurnInput{SessionID: "s", TurnNumber: 1, UserMessage: "hi", Model: "m"},
		&scriptedModel{replies: []turnapi.CallModelResult{textReply()}})
	r := run.result
	if !r.Completed || r.Partial || r.Failed || r.TurnExitReason != StopTextResponse || r.APICalls != 1 {
		t.Fatalf("result = %+v", r)
	}
	if r.FinalResponse == nil || *r.FinalResponse != "done" || r.Error != nil {
		t.Fatalf("final/error = %v/%v", r.FinalResponse, r.Error)
	}
	if run.beginning.UserMessage != "hi" || run.beginning.TurnID != r.TurnID {
		t.Fatalf("begin = %+v", run.beginning)
	}
	if len(run.finished.FinalParts) != 1 || run.finished.FinalParts[0] != 100 || run.finished.Status != "completed" {
		t.Fatalf("finish = %+v", run.finished)
	}
	if r.Usage.TotalTokens != 12 {
		t.Fatalf("usage = %+v", r.Usage)
	}
}

func TestTurnToolsThenText(t *testing.T) {
	model := &scriptedModel{replies: []turnapi.CallModelResult{toolReply("write_file"), toolReply("read_file"), textReply()}}
	run := runTurn(t, TurnInput{SessionID: "s", TurnNumber: 2, Workdir: "/w"}, model)
	r := run.result
	if !r.Completed || r.TurnExitReason != StopTextResponse || r.APICalls != 3 {
		t.Fatalf("result = %+v", r)
	}
	if len(run.toolRuns) != 2 || run.toolRuns[0].AssistantMessageID != 100 || run.toolRuns[1].AssistantMessageID != 101 {
		t.Fatalf("tool runs = %+v", run.toolRuns)
	}
	if run.toolRuns[0].Workdir != "/w" || run.toolRuns[1].Call != 2 {
		t.Fatalf("tool run input = %+v", run.toolRuns)
	}
	for i, in := range model.inputs {
		if in.Call != i+1 || !in.ToolsEnabled || in.ExtraUserMessage != "" {
			t.Fatalf("model input %d = %+v", i, in)
		}
	}
	if r.Usage.TotalTokens != 36 {
		t.Fatalf("usage = %+v", r.Usage)
	}
}

func TestTurnMaxIterationsSummary(t *testing.T) {
	model := &scriptedModel{replies: []turnapi.CallModelResult{toolReply("terminal"), toolReply("terminal"), toolReply("terminal"), textReply()}}
	run := runTurn(t, TurnInput{SessionID: "s", TurnNumber: 1, MaxIterations: 3}, model)
	r := run.result
	if r.Completed || !r.Partial || r.TurnExitReason != StopMaxIterations || r.APICalls != 4 {
		t.Fatalf("result = %+v", r)
	}
	if len(run.toolRuns) != 3 {
		t.Fatalf("tool runs = %d, want 3", len(run.toolRuns))
	}
	last := model.inputs[3]
	if last.ToolsEnabled || last.ExtraUserMessage != SummaryRequest {
		t.Fatalf("summary call input = %+v", last)
	}
	if r.FinalResponse == nil {
		t.Fatal("summary must be the final response")
	}
}

func TestTurnSummaryFailsIsBudgetExhausted(t *testing.T) {
	fail := temporal.NewNonRetryableApplicationError("boom", "server_error", nil)
	model := &scriptedModel{
		replies: []turnapi.CallModelResult{toolReply("terminal"), {}},
		errs:    []error{nil, fail},
	}
	run := runTurn(t, TurnInput{SessionID: "s", TurnNumber: 1, MaxIterations: 1}, model)
	r := run.result
	if r.TurnExitReason != StopBudgetExhausted || r.Completed || !r.Partial || r.APICalls != 2 || r.FinalResponse != nil {
		t.Fatalf("result = %+v", r)
	}
}

func TestTurnEmptyRepliesNudgedThenExhausted(t *testing.T) {
	empty := turnapi.CallModelResult{FinishReason: "stop", Kind: loop.ReplyEmpty}
	model := &scriptedModel{replies: []turnapi.CallModelResult{empty}}
	run := runTurn(t, TurnInput{SessionID: "s", TurnNumber: 1}, model)
	r := run.result
	if r.TurnExitReason != StopEmptyResponseExhausted || r.APICalls != lim.EmptyRetries+1 || r.FinalResponse != nil {
		t.Fatalf("result = %+v", r)
	}
	if model.inputs[0].ExtraUserMessage != "" {
		t.Fatal("first call must carry no nudge")
	}
	for _, in := range model.inputs[1:] {
		if in.ExtraUserMessage != EmptyNudge {
			t.Fatalf("retry input = %+v", in)
		}
	}
}

func TestTurnEmptyThenText(t *testing.T) {
	model := &scriptedModel{replies: []turnapi.CallModelResult{{FinishReason: "stop", Kind: loop.ReplyEmpty}, textReply()}}
	r := runTurn(t, TurnInput{SessionID: "s", TurnNumber: 1}, model).result
	if !r.Completed || r.APICalls != 2 {
		t.Fatalf("result = %+v", r)
	}
}

func TestTurnTruncated(t *testing.T) {
	model := &scriptedModel{replies: []turnapi.CallModelResult{{TextChars: 10, FinishReason: "length", Kind: loop.ReplyTextCutOff}}}
	r := runTurn(t, TurnInput{SessionID: "s", TurnNumber: 1}, model).result
	if r.TurnExitReason != StopTruncated || r.Completed || !r.Partial || r.FinalResponse == nil {
		t.Fatalf("result = %+v", r)
	}
}

func TestTurnModelErrorFails(t *testing.T) {
	model := &scriptedModel{
		replies: []turnapi.CallModelResult{{}},
		errs:    []error{temporal.NewNonRetryableApplicationError("invalid api key", "auth", errors.New("401"))},
	}
	run := runTurn(t, TurnInput{SessionID: "s", TurnNumber: 1}, model)
	r := run.result
	if !r.Failed || r.Completed || r.TurnExitReason != StopError || r.Error == nil || r.APICalls != 1 {
		t.Fatalf("result = %+v", r)
	}
	if run.finished.Status != "failed" || run.finished.Error == "" {
		t.Fatalf("finish = %+v", run.finished)
	}
}

func TestTurnWorkflowID(t *testing.T) {
	if got := TurnWorkflowID("abc", 7); got != "turn/abc/7" {
		t.Fatalf("TurnWorkflowID = %q", got)
	}
}
