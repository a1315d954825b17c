package telemetry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
)

// Scopes of the meters the process's metrics come from.
const (
	// ScopeTalaria is Talaria's own instruments (Metrics).
	ScopeTalaria = "talaria"
	// ScopeSDK is the Temporal SDK's client and worker metrics, and what
	// workflow code counts through workflow.GetMetricsHandler.
	ScopeSDK = "temporal-sdk"
	// ScopeServer is the embedded Temporal server's metrics.
	ScopeServer = "temporal-server"
)

// ErrSetup marks a telemetry that could not be set up (an exporter the
// environment asks for that cannot be made).
var ErrSetup = errors.New("telemetry")

// Telemetry is one process's metrics and traces. The zero of each part is
// off: a nil *Telemetry has neither.
type Telemetry struct {
	registry *prometheus.Registry
	meters   *sdkmetric.MeterProvider
	traces   *sdktrace.TracerProvider
	talaria  *Metrics
	logger   *slog.Logger
}

// Option configures New.
type Option func(*settings)

type settings struct {
	metrics bool
	getenv  func(string) string
	spans   sdktrace.SpanExporter
	sync    bool
	process string
	logger  *slog.Logger
}

// WithMetrics turns metrics on: a registry, the meters and /metrics.
func WithMetrics(on bool) Option { return func(s *settings) { s.metrics = on } }

// WithTracesFromEnv turns traces on when getenv names an OTLP endpoint
// (see TracesConfigured), exporting in batches to it.
func WithTracesFromEnv(getenv func(string) string) Option {
	return func(s *settings) { s.getenv = getenv }
}

// WithSpanExporter turns traces on with exp, each span exported as it
// ends (tests: an in-memory exporter). It wins over WithTracesFromEnv.
func WithSpanExporter(exp sdktrace.SpanExporter) Option {
	return func(s *settings) { s.spans, s.sync = exp, true }
}

// WithProcess names the process kind (serve, worker, scheduler, temporal)
// in the resource of its metrics and spans.
func WithProcess(kind string) Option { return func(s *settings) { s.process = kind } }

// WithLogger receives the errors of exporting (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *settings) { s.logger = l } }

// New sets up what opts turn on. With neither metrics nor traces it
// returns nil: every method of a nil *Telemetry is a no-op.
func New(ctx context.Context, opts ...Option) (*Telemetry, error) {
	var s settings
	for _, o := range opts {
		o(&s)
	}
	s.logger = cmp.Or(s.logger, slog.Default())
	if s.spans == nil && s.getenv != nil && TracesConfigured(s.getenv) {
		exp, err := envSpanExporter(ctx, s.getenv)
		if err != nil {
			return nil, err
		}
		s.spans = exp
	}
	if !s.metrics && s.spans == nil {
		return nil, nil
	}
	installErrorHandler(s.logger)
	res, err := processResource(ctx, s.process)
	if err != nil {
		if res == nil {
			return nil, fmt.Errorf("%w: resource: %w", ErrSetup, err)
		}
		// A malformed OTEL_RESOURCE_ATTRIBUTES leaves out what it could
		// not read; metrics and traces go on.
		s.logger.Warn("telemetry: resource attributes partly read", "error", err)
	}
	t := &Telemetry{logger: s.logger}
	if s.metrics {
		if err := t.setupMetrics(res); err != nil {
			return nil, err
		}
	}
	if s.spans != nil {
		t.traces = newTracerProvider(res, s.spans, s.sync)
	}
	return t, nil
}

// processResource names the process in what it exports; the standard
// variables (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) win.
func processResource(ctx context.Context, kind string) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String("service.name", "talaria")}
	if kind != "" {
		attrs = append(attrs, attribute.String("talaria.process", kind))
	}
	return resource.New(ctx, resource.WithAttributes(attrs...), resource.WithTelemetrySDK(), resource.WithFromEnv())
}

// setupMetrics makes the registry, the exporter reading the meters into it
// and Talaria's instruments.
func (t *Telemetry) setupMetrics(res *resource.Resource) error {
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return fmt.Errorf("%w: go collector: %w", ErrSetup, err)
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return fmt.Errorf("%w: process collector: %w", ErrSetup, err)
	}
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return fmt.Errorf("%w: prometheus exporter: %w", ErrSetup, err)
	}
	t.registry = reg
	t.meters = sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res),
		sdkmetric.WithView(secondsViews(ScopeSDK, ScopeServer)...))
	if t.talaria, err = newMetrics(t.meters.Meter(ScopeTalaria)); err != nil {
		return fmt.Errorf("%w: talaria metrics: %w", ErrSetup, err)
	}
	return nil
}

// latencyBuckets are the bounds, in seconds, of the latency histograms of
// Temporal (its timers) and of model calls.
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// secondsViews give the second-valued histograms of scopes latency buckets
// (OpenTelemetry's default bounds are for milliseconds).
func secondsViews(scopes ...string) []sdkmetric.View {
	views := make([]sdkmetric.View, 0, len(scopes))
	for _, sc := range scopes {
		views = append(views, sdkmetric.NewView(
			sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram, Unit: "s", Scope: instrumentation.Scope{Name: sc}},
			sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: latencyBuckets}},
		))
	}
	return views
}

// MetricsOn reports whether metrics are on.
func (t *Telemetry) MetricsOn() bool { return t != nil && t.meters != nil }

// TracesOn reports whether traces are on.
func (t *Telemetry) TracesOn() bool { return t != nil && t.traces != nil }

// Metrics are Talaria's own instruments; nil (whose methods do nothing)
// when metrics are off.
func (t *Telemetry) Metrics() *Metrics {
	if t == nil {
		return nil
	}
	return t.talaria
}

// Meter is the meter of scope, nil when metrics are off.
func (t *Telemetry) Meter(scope string) metric.Meter {
	if !t.MetricsOn() {
		return nil
	}
	return t.meters.Meter(scope)
}

// ClientMetricsHandler is the Temporal SDK's metrics handler for clients
// and their workers (counters monotonic), nil when metrics are off. What
// workflow code counts through workflow.GetMetricsHandler goes here too;
// the SDK drops it while a workflow replays.
func (t *Telemetry) ClientMetricsHandler() client.MetricsHandler {
	if !t.MetricsOn() {
		return nil
	}
	return temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter:                t.meters.Meter(ScopeSDK),
		UseMonotonicCounters: true,
		OnError: func(err error) {
			t.logger.Warn("temporal sdk metric", "error", err)
		},
	})
}

// Shutdown flushes the spans not exported yet and stops the providers.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.traces != nil {
		if err := t.traces.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop traces: %w", err))
		}
	}
	if t.meters != nil {
		if err := t.meters.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop metrics: %w", err))
		}
	}
	return errors.Join(errs...)
}
