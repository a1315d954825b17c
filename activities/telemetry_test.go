package activities

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/telemetry"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

func TestModelOutcome(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, telemetry.ModelOutcomeOK},
		{&llm.Error{Class: turnapi.ClassRateLimit, Status: 429}, "rate_limit"},
		{fmt.Errorf("wrapped: %w", &llm.Error{Class: turnapi.ClassContextOverflow}), "context_overflow"},
		{context.Canceled, telemetry.Other},
		{errors.New("sk-live-123 leaked in a message"), telemetry.Other},
	} {
		if got := modelOutcome(tt.err); got != tt.want {
			t.Errorf("modelOutcome(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestToolOutcome(t *testing.T) {
	for _, tt := range []struct {
		name        string
		action      turnapi.PlanAction
		r           tools.Result
		ran, unsure bool
		want        string
	}{
		{"ran fine", turnapi.PlanRun, tools.Result{}, true, false, telemetry.ToolOK},
		{"ran and failed", turnapi.PlanRun, tools.Result{IsError: true}, true, false, telemetry.ToolError},
		{"cancelled", turnapi.PlanRun, tools.Result{IsError: true, Cancelled: true}, true, false, telemetry.ToolCancelled},
		{"overran", turnapi.PlanRun, tools.Result{IsError: true, TimedOut: true}, true, false, telemetry.ToolTimedOut},
		{"claimed before, not run again", turnapi.PlanRun, tools.Result{IsError: true}, true, true, telemetry.ToolUnknown},
		{"planned but no result", turnapi.PlanRun, tools.Result{}, false, false, telemetry.ToolSkipped},
		{"no such tool", turnapi.PlanUnknown, tools.Result{}, false, false, telemetry.ToolInvalid},
		{"bad arguments", turnapi.PlanInvalidArgs, tools.Result{}, false, false, telemetry.ToolInvalid},
		{"guardrail", turnapi.PlanBlocked, tools.Result{}, false, false, telemetry.ToolBlocked},
		{"not approved", turnapi.PlanRefused, tools.Result{}, false, false, telemetry.ToolRefused},
		{"clarify answered", turnapi.PlanAnswer, tools.Result{}, false, false, telemetry.ToolAnswered},
		{"skipped", turnapi.PlanSkip, tools.Result{}, false, false, telemetry.ToolSkipped},
	} {
		if got := toolOutcome(tt.action, tt.r, tt.ran, tt.unsure); got != tt.want {
			t.Errorf("%s: toolOutcome = %q, want %q", tt.name, got, tt.want)
		}
	}
}
