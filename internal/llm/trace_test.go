package llm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestTracedKeepsSecretsOut: a model call made inside a span gets a client
// span of its own that names the endpoint with its query values redacted
// (a key may be one), records the status, ends when the body is closed and
// sends no trace header to the provider.
func TestTracedKeepsSecretsOut(t *testing.T) {
	t.Parallel()
	var header http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header = r.Header.Clone()
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, "slow down")
	}))
	defer srv.Close()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, parent := tp.Tracer("test").Start(context.Background(), "CallModel")

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions?key=SECRET-KEY", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := traced(ctx, nil).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Ended()); n != 0 {
		t.Fatalf("%d spans ended before the body was closed", n)
	}
	_, _ = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	_ = resp.Body.Close() // a second close ends nothing more
	parent.End()

	var model sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "model POST" {
			model = s
		}
	}
	if model == nil || model.Parent().SpanID() != parent.SpanContext().SpanID() || len(rec.Ended()) != 2 {
		t.Fatalf("spans %v: want one model POST span inside CallModel", rec.Ended())
	}
	attrs := map[string]string{}
	for _, kv := range model.Attributes() {
		attrs[string(kv.Key)] = kv.Value.String()
		if strings.Contains(kv.Value.String(), "SECRET") {
			t.Errorf("attribute %s carries the key: %s", kv.Key, kv.Value.String())
		}
	}
	if attrs["http.response.status_code"] != "429" || !strings.HasSuffix(attrs["url.full"], "/v1/chat/completions?key="+redacted) {
		t.Fatalf("attributes = %v", attrs)
	}
	if model.Status().Code.String() != "Error" {
		t.Errorf("status = %v, want Error for a 429", model.Status())
	}
	for _, h := range []string{"Traceparent", "Tracestate", "Baggage"} {
		if header.Get(h) != "" {
			t.Errorf("the provider received %s", h)
		}
	}
}

// TestTracedWithoutSpan: without a span in the context the transport is
// the one given, untouched.
func TestTracedWithoutSpan(t *testing.T) {
	t.Parallel()
	base := http.DefaultTransport
	if got := traced(context.Background(), base); got != base {
		t.Fatalf("traced without a span = %T, want the base transport", got)
	}
}
