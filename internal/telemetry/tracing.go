package telemetry

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

// TracesConfigured reports whether the standard OpenTelemetry variables
// ask for traces: an OTLP endpoint is named, and neither OTEL_SDK_DISABLED
// nor OTEL_TRACES_EXPORTER=none turns them off. Pure.
func TracesConfigured(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")), "none") {
		return false
	}
	return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) != "" ||
		strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) != ""
}

// Protocols of the OTLP span exporter.
const (
	protocolGRPC = "grpc"
	protocolHTTP = "http/protobuf"
)

// tracesProtocol is the OTLP protocol the variables choose: the traces'
// own, else the general one, else http/protobuf (the specification's
// default). An unsupported value is an error. Pure.
func tracesProtocol(getenv func(string) string) (string, error) {
	p := cmp.Or(strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")), strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL")))
	switch strings.ToLower(p) {
	case "", protocolHTTP:
		return protocolHTTP, nil
	case protocolGRPC:
		return protocolGRPC, nil
	}
	return "", fmt.Errorf("%w: OTEL_EXPORTER_OTLP_PROTOCOL %q is not one of grpc, http/protobuf", ErrSetup, p)
}

// envSpanExporter is the OTLP exporter the variables describe; the
// exporter reads the endpoint, headers, TLS and timeout variables itself.
// It connects lazily: a collector that is down costs dropped spans, never
// a start-up failure.
func envSpanExporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	protocol, err := tracesProtocol(getenv)
	if err != nil {
		return nil, err
	}
	var exp sdktrace.SpanExporter
	if protocol == protocolGRPC {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: OTLP %s span exporter: %w", ErrSetup, protocol, err)
	}
	return exp, nil
}

func newTracerProvider(res *resource.Resource, exp sdktrace.SpanExporter, sync bool) *sdktrace.TracerProvider {
	processor := sdktrace.WithBatcher(exp)
	if sync {
		processor = sdktrace.WithSyncer(exp)
	}
	return sdktrace.NewTracerProvider(processor, sdktrace.WithResource(res))
}

// ClientInterceptors are the Temporal client's interceptors for traces
// (none when they are off); a worker made from the client uses them too.
// Starting a child workflow of one of the roots types begins a new trace,
// linked to the starter's span: a turn started by its session's
// long-lived coordinator is a trace of its own.
func (t *Telemetry) ClientInterceptors(roots ...string) ([]interceptor.ClientInterceptor, error) {
	if !t.TracesOn() {
		return nil, nil
	}
	i, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		Tracer:      t.traces.Tracer(ScopeSDK),
		SpanStarter: rootStarter(roots),
	})
	if err != nil {
		return nil, fmt.Errorf("%w: tracing interceptor: %w", ErrSetup, err)
	}
	return []interceptor.ClientInterceptor{i}, nil
}

// childStartOperation is the SDK's span name prefix of a child workflow's
// start ("StartChildWorkflow:<type>").
const childStartOperation = "StartChildWorkflow:"

// rootStarter starts spans as the SDK does, except that the start of a
// child workflow of a root type opens a new trace linked to its parent.
func rootStarter(roots []string) func(context.Context, trace.Tracer, string, ...trace.SpanStartOption) trace.Span {
	return func(ctx context.Context, tr trace.Tracer, name string, opts ...trace.SpanStartOption) trace.Span {
		if startsTrace(name, roots) {
			opts = append(opts, trace.WithNewRoot())
			if parent := trace.SpanContextFromContext(ctx); parent.IsValid() {
				opts = append(opts, trace.WithLinks(trace.Link{SpanContext: parent}))
			}
		}
		_, span := tr.Start(ctx, name, opts...)
		return span
	}
}

// startsTrace reports whether the SDK span name is the start of a child
// workflow of one of the roots types. Pure.
func startsTrace(spanName string, roots []string) bool {
	typ, ok := strings.CutPrefix(spanName, childStartOperation)
	return ok && slices.Contains(roots, typ)
}
