package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TestBatchEndingWithErrorIsAnswered: a tool batch that ends with an error
// — interrupted while it runs, or failed — is followed by AnswerCalls for
// that batch; a batch that succeeds is not.
func TestBatchEndingWithErrorIsAnswered(t *testing.T) {
	for _, tt := range []struct {
		name        string
		batchErr    error
		interrupt   bool
		wantAnswer  bool
		interrupted bool
		reason      string
		stop        StopReason
	}{
		{name: "interrupted", interrupt: true, wantAnswer: true, interrupted: true, stop: StopInterrupted},
		{name: "failed", batchErr: temporal.NewNonRetryableApplicationError("the store is gone", "store", nil), wantAnswer: true, reason: "the store is gone", stop: StopError},
		{name: "succeeded", stop: StopTextResponse},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv()
			Register(env)
			(&activities.Activities{}).Register(env)
			replies := []turnapi.CallModelResult{toolReply("terminal"), textReply()}
			calls := 0
			env.OnActivity(turnapi.BeginTurnName, mock.Anything, mock.Anything).Return(turnapi.BeginTurnResult{Providers: 1}, nil)
			env.OnActivity(turnapi.CallModelName, mock.Anything, mock.Anything).Return(
				func(context.Context, turnapi.CallModelInput) (turnapi.CallModelResult, error) {
					calls++
					r := replies[min(calls, len(replies))-1]
					r.MessageID = int64(calls)
					return r, nil
				})
			env.OnActivity(turnapi.ExecuteToolsName, mock.Anything, mock.Anything).Return(
				func(ctx context.Context, _ turnapi.ExecuteToolsInput) (turnapi.ExecuteToolsResult, error) {
					if tt.interrupt {
						env.SignalWorkflow(SignalInterrupt, "stop")
						<-ctx.Done()
						return turnapi.ExecuteToolsResult{}, ctx.Err()
					}
					return turnapi.ExecuteToolsResult{}, tt.batchErr
				})
			var answered []turnapi.AnswerCallsInput
			env.OnActivity(turnapi.AnswerCallsName, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in turnapi.AnswerCallsInput) (turnapi.AnswerCallsResult, error) {
					answered = append(answered, in)
					return turnapi.AnswerCallsResult{}, nil
				})
			env.OnActivity(turnapi.FinishTurnName, mock.Anything, mock.Anything).Return(turnapi.FinishTurnResult{}, nil)
			env.SetTestTimeout(30 * time.Second)
			env.ExecuteWorkflow(TurnWorkflowName, TurnInput{SessionID: "s", TurnNumber: 1, UserMessage: "go", Model: "m"})
			var res ConversationResult
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			if res.TurnExitReason != tt.stop {
				t.Errorf("exit reason %q, want %q", res.TurnExitReason, tt.stop)
			}
			if !tt.wantAnswer {
				if len(answered) != 0 {
					t.Fatalf("AnswerCalls ran after a successful batch: %+v", answered)
				}
				return
			}
			if len(answered) != 1 {
				t.Fatalf("AnswerCalls ran %d times, want once", len(answered))
			}
			a := answered[0]
			if a.Batch.AssistantMessageID != 1 || a.Batch.TurnID == "" || a.Interrupted != tt.interrupted || a.Reason != tt.reason {
				t.Errorf("AnswerCalls input %+v, want interrupted %v reason %q", a, tt.interrupted, tt.reason)
			}
		})
	}
}
