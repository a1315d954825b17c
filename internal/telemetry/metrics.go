package telemetry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Names of Talaria's own metrics, as Prometheus shows them.
const (
	MetricTurns          = "talaria_turns_total"
	MetricModelCalls     = "talaria_model_calls_total"
	MetricModelCallTime  = "talaria_model_call_seconds"
	MetricTokens         = "talaria_tokens_total"
	MetricCost           = "talaria_cost_usd_total"
	MetricToolCalls      = "talaria_tool_calls_total"
	MetricApprovals      = "talaria_approvals_total"
	MetricCronRuns       = "talaria_cron_runs_total"
	labelStopReason      = "stop_reason"
	labelProvider        = "provider"
	labelOutcome         = "outcome"
	labelKind            = "kind"
	labelTool            = "tool"
	labelStatus          = "status"
	modelCallDescription = "Duration of one model HTTP call, from request to the reply's end."
)

// Metrics are Talaria's own instruments. A nil *Metrics counts nothing.
// Each method bounds its label values (see labels.go).
type Metrics struct {
	turns      metric.Int64Counter
	modelCalls metric.Int64Counter
	modelTime  metric.Float64Histogram
	tokens     metric.Int64Counter
	cost       metric.Float64Counter
	toolCalls  metric.Int64Counter
	cronRuns   metric.Int64Counter
}

// newMetrics makes Talaria's instruments on m.
func newMetrics(m metric.Meter) (*Metrics, error) {
	var out Metrics
	var errs []error
	counter := func(name, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	out.turns = counter(MetricTurns, "Turns ended, by stop reason.")
	out.modelCalls = counter(MetricModelCalls, "Model calls, by provider class and outcome (ok or the error class).")
	out.tokens = counter(MetricTokens, "Tokens the model reported, by kind (prompt, completion, reasoning, cached, cache_write).")
	out.toolCalls = counter(MetricToolCalls, "Tool calls answered, by tool and outcome.")
	out.cronRuns = counter(MetricCronRuns, "Scheduled job runs finished, by status.")
	cost, err := m.Float64Counter(MetricCost, metric.WithUnit("USD"),
		metric.WithDescription("What model calls cost at the models' prices, in US dollars, by provider class."))
	out.cost = cost
	errs = append(errs, err)
	h, err := m.Float64Histogram(MetricModelCallTime, metric.WithUnit("s"),
		metric.WithDescription(modelCallDescription), metric.WithExplicitBucketBoundaries(latencyBuckets...))
	out.modelTime = h
	if err := errors.Join(append(errs, err)...); err != nil {
		return nil, fmt.Errorf("instruments: %w", err)
	}
	return &out, nil
}

// TurnEnded counts a turn that ended with stopReason.
func (m *Metrics) TurnEnded(ctx context.Context, stopReason string) {
	if m == nil {
		return
	}
	m.turns.Add(ctx, 1, metric.WithAttributes(attribute.String(labelStopReason, StopReasonLabel(stopReason))))
}

// ModelCall counts one model call to the endpoint baseURL that took d and
// ended with outcome ("ok" or an error class).
func (m *Metrics) ModelCall(ctx context.Context, baseURL, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	attrs := metric.WithAttributes(attribute.String(labelProvider, ProviderClass(baseURL)),
		attribute.String(labelOutcome, ModelOutcomeLabel(outcome)))
	m.modelCalls.Add(ctx, 1, attrs)
	m.modelTime.Record(ctx, d.Seconds(), attrs)
}

// Token kinds.
const (
	TokensPrompt     = "prompt"
	TokensCompletion = "completion"
	TokensReasoning  = "reasoning"
	TokensCached     = "cached"
	TokensCacheWrite = "cache_write"
)

// Tokens counts n tokens of kind (one of the Tokens* kinds); n <= 0 is
// not counted.
func (m *Metrics) Tokens(ctx context.Context, kind string, n int64) {
	if m == nil || n <= 0 {
		return
	}
	m.tokens.Add(ctx, n, metric.WithAttributes(attribute.String(labelKind, TokenKindLabel(kind))))
}

// Cost counts usd spent on a model call to the endpoint baseURL; zero or
// less is not counted.
func (m *Metrics) Cost(ctx context.Context, baseURL string, usd float64) {
	if m == nil || usd <= 0 {
		return
	}
	m.cost.Add(ctx, usd, metric.WithAttributes(attribute.String(labelProvider, ProviderClass(baseURL))))
}

// ToolCall counts one answered tool call; tool is bounded by known (the
// registry's names).
func (m *Metrics) ToolCall(ctx context.Context, tool string, known []string, outcome string) {
	if m == nil {
		return
	}
	m.toolCalls.Add(ctx, 1, metric.WithAttributes(attribute.String(labelTool, ToolLabel(tool, known)),
		attribute.String(labelOutcome, ToolOutcomeLabel(outcome))))
}

// CronRun counts a scheduled run that finished with status.
func (m *Metrics) CronRun(ctx context.Context, status string) {
	if m == nil {
		return
	}
	m.cronRuns.Add(ctx, 1, metric.WithAttributes(attribute.String(labelStatus, CronStatusLabel(status))))
}
