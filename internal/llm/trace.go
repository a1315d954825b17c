package llm

import (
	"context"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traced is base (nil: http.DefaultTransport) with a client span for each
// request, in the trace of ctx's span, when there is one; else base as it
// is: without traces a call costs nothing more. Nothing about the trace is
// sent to the provider (no propagation headers), and the span holds what
// otelhttp records of a request (method, endpoint, status), never the
// request's headers or body.
func traced(ctx context.Context, base http.RoundTripper) http.RoundTripper {
	span := trace.SpanFromContext(ctx)
	if !span.SpanContext().IsValid() {
		return base
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return otelhttp.NewTransport(base,
		otelhttp.WithTracerProvider(span.TracerProvider()),
		otelhttp.WithMeterProvider(noop.NewMeterProvider()),
		otelhttp.WithPropagators(propagation.NewCompositeTextMapPropagator()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return "model " + r.Method }),
	)
}
