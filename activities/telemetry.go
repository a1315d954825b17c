package activities

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/telemetry"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// callModel is llm.Call counted: the call, its time and outcome, and the
// tokens the provider reported.
func (a *Activities) callModel(ctx context.Context, p llm.Endpoint, req llm.Request, opts llm.Options) (llm.Reply, error) {
	began := time.Now()
	reply, err := a.callKeys(ctx, p, req, opts)
	a.Metrics.ModelCall(ctx, p.BaseURL, modelOutcome(err), time.Since(began))
	if err == nil {
		countTokens(ctx, a.Metrics, reply.Usage)
	}
	return reply, err
}

// modelOutcome is the outcome label of a model call's error: ok, the
// error's class, or other. Pure.
func modelOutcome(err error) string {
	if err == nil {
		return telemetry.ModelOutcomeOK
	}
	var e *llm.Error
	if errors.As(err, &e) {
		return string(e.Class)
	}
	return telemetry.Other
}

// countTokens counts the usage a provider reported, by kind.
func countTokens(ctx context.Context, m *telemetry.Metrics, u llm.Usage) {
	m.Tokens(ctx, telemetry.TokensPrompt, int64(u.PromptTokens))
	m.Tokens(ctx, telemetry.TokensCompletion, int64(u.CompletionTokens))
	m.Tokens(ctx, telemetry.TokensReasoning, int64(u.ReasoningTokens))
	m.Tokens(ctx, telemetry.TokensCached, int64(u.CacheReadTokens))
}

// toolOutcome is the outcome label of one call of a batch: how the plan
// settled it and, for a call that ran, how it ended. ran says whether the
// batch has a result for it; unsure whether that result is "outcome
// unknown" (claimed by an earlier attempt, not run again). Pure.
func toolOutcome(action turnapi.PlanAction, r tools.Result, ran, unsure bool) string {
	switch action {
	case turnapi.PlanRun:
		switch {
		case unsure:
			return telemetry.ToolUnknown
		case !ran:
			return telemetry.ToolSkipped
		case r.TimedOut:
			return telemetry.ToolTimedOut
		case r.Cancelled:
			return telemetry.ToolCancelled
		case r.IsError:
			return telemetry.ToolError
		}
		return telemetry.ToolOK
	case turnapi.PlanUnknown, turnapi.PlanInvalidArgs:
		return telemetry.ToolInvalid
	case turnapi.PlanBlocked:
		return telemetry.ToolBlocked
	case turnapi.PlanRefused:
		return telemetry.ToolRefused
	case turnapi.PlanAnswer:
		return telemetry.ToolAnswered
	}
	return telemetry.ToolSkipped
}

// traceTools records a span for each call that ran in a batch begun at
// began, inside the activity's span (when traces are on): its tool's name
// (bounded as the metric's label), its call id, duration and outcome;
// never its arguments or output.
func traceTools(ctx context.Context, began time.Time, results []tools.Result, known []string) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return
	}
	tr := parent.TracerProvider().Tracer(telemetry.ScopeTalaria)
	ended := time.Now()
	for _, r := range results {
		end := began.Add(r.Duration)
		if r.Duration <= 0 || end.After(ended) {
			end = ended
		}
		name := telemetry.ToolLabel(r.Name, known)
		outcome := toolOutcome(turnapi.PlanRun, r, true, false)
		_, span := tr.Start(ctx, "tool "+name, trace.WithTimestamp(began), trace.WithAttributes(
			attribute.String("talaria.tool", name), attribute.String("talaria.tool_call_id", r.CallID),
			attribute.String("talaria.outcome", outcome)))
		if outcome != telemetry.ToolOK {
			span.SetStatus(codes.Error, outcome)
		}
		span.End(trace.WithTimestamp(end))
	}
}

// countToolCalls counts every call of a batch this attempt answered: a
// result an earlier attempt stored was counted then.
func (a *Activities) countToolCalls(ctx context.Context, calls []models.ToolCall, plan turnapi.PlanIndex,
	ran, stored, unsure map[string]tools.Result) {
	if a.Metrics == nil {
		return
	}
	known := a.toolNames()
	for _, tc := range calls {
		if _, done := stored[tc.ID]; done {
			continue
		}
		r, ok := ran[tc.ID]
		_, isUnsure := unsure[tc.ID]
		a.Metrics.ToolCall(ctx, tc.Function.Name, known, toolOutcome(plan.Get(tc.ID).Action, r, ok, isUnsure))
	}
}
