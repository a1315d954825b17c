package api

import (
	"net/http"
	"testing"

	"github.com/talaria-agent/talaria/workflows"
)

func TestEndingOf(t *testing.T) {
	text, empty, failure := "an answer", "", "the model is down"
	for _, tt := range []struct {
		name   string
		res    workflows.ConversationResult
		finish string
		status int
		code   string
	}{
		{"completed", workflows.ConversationResult{Completed: true, TurnExitReason: workflows.StopTextResponse, FinalResponse: &text}, "stop", 0, ""},
		{"max iterations with a summary", workflows.ConversationResult{Partial: true, TurnExitReason: workflows.StopMaxIterations, FinalResponse: &text}, "length", 0, ""},
		{"truncated", workflows.ConversationResult{Partial: true, TurnExitReason: workflows.StopTruncated, FinalResponse: &text}, "length", 0, ""},
		{"guardrail halt explains", workflows.ConversationResult{Partial: true, TurnExitReason: workflows.StopGuardrailHalt, FinalResponse: &text}, "stop", 0, ""},
		{"interrupted with text", workflows.ConversationResult{Interrupted: true, Partial: true, TurnExitReason: workflows.StopInterrupted, FinalResponse: &text}, "", http.StatusConflict, "interrupted"},
		{"failed", workflows.ConversationResult{Failed: true, TurnExitReason: workflows.StopError, Error: &failure}, "", http.StatusBadGateway, "error"},
		{"incomplete without text", workflows.ConversationResult{Partial: true, TurnExitReason: workflows.StopEmptyResponseExhausted, FinalResponse: &empty}, "", http.StatusBadGateway, "empty_response_exhausted"},
		{"budget without text", workflows.ConversationResult{Partial: true, TurnExitReason: workflows.StopBudgetExhausted}, "", http.StatusBadGateway, "budget_exhausted"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := endingOf(tt.res)
			if e.finish != tt.finish {
				t.Errorf("finish %q, want %q", e.finish, tt.finish)
			}
			switch {
			case tt.status == 0 && e.err != nil:
				t.Errorf("error %v, want none", e.err)
			case tt.status != 0 && (e.err == nil || e.err.status != tt.status || e.err.Code != tt.code):
				t.Errorf("error %+v, want %d %s", e.err, tt.status, tt.code)
			}
		})
	}
}
