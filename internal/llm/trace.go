package llm

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the spans of model HTTP calls.
const tracerName = "github.com/talaria-agent/talaria/internal/llm"

// traced is base (nil: http.DefaultTransport) with a client span for each
// request, in the trace of ctx's span, when there is one; else base as it
// is: without traces a call costs nothing more. The span holds the method,
// the endpoint with its user info and query values redacted (RedactURL: a
// key may sit in either), the status and, for a streamed reply, lasts until
// the body is closed. Nothing about the trace is sent to the provider (no
// propagation headers), and no header, body or transport error text (which
// quotes the full URL) is recorded.
func traced(ctx context.Context, base http.RoundTripper) http.RoundTripper {
	span := trace.SpanFromContext(ctx)
	if !span.SpanContext().IsValid() {
		return base
	}
	base = cmp.Or(base, http.DefaultTransport)
	return &tracedTransport{base: base, tracer: span.TracerProvider().Tracer(tracerName)}
}

// tracedTransport is traced's RoundTripper.
type tracedTransport struct {
	base   http.RoundTripper
	tracer trace.Tracer
}

func (t *tracedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, span := t.tracer.Start(r.Context(), "model "+r.Method,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("http.request.method", r.Method),
			attribute.String("server.address", r.URL.Hostname()),
			attribute.String("url.full", RedactURL(r.URL.String())),
		))
	resp, err := t.base.RoundTrip(r.WithContext(ctx))
	if err != nil {
		span.SetStatus(codes.Error, "request failed")
		span.End()
		return resp, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= http.StatusBadRequest {
		span.SetStatus(codes.Error, http.StatusText(resp.StatusCode))
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		span.End()
		return resp, nil
	}
	resp.Body = &spanBody{ReadCloser: resp.Body, span: span}
	return resp, nil
}

// spanBody ends its span when the reply's body is closed.
type spanBody struct {
	io.ReadCloser
	span trace.Span
	once sync.Once
}

func (b *spanBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() { b.span.End() })
	return err
}
