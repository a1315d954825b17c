package telemetry

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// scrape reads the metrics t serves on a real listener.
func scrape(t *testing.T, tel *Telemetry) string {
	t.Helper()
	srv, err := tel.Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET %s: %d %s", srv.URL(), resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return string(body)
}

func TestMetricsServed(t *testing.T) {
	ctx := context.Background()
	tel, err := New(ctx, WithMetrics(true), WithProcess("worker"))
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(ctx)
	m := tel.Metrics()
	m.TurnEnded(ctx, "text_response")
	m.TurnEnded(ctx, "made up by someone")
	m.ModelCall(ctx, "https://user:sk-abc@api.openai.com/v1", "ok", 1500*time.Millisecond)
	m.Tokens(ctx, TokensPrompt, 120)
	m.Tokens(ctx, TokensCompletion, 0)
	m.Cost(ctx, "https://api.anthropic.com", 0.25)
	m.Cost(ctx, "https://api.anthropic.com", 0.5)
	m.Cost(ctx, "https://api.anthropic.com", 0)
	m.ToolCall(ctx, "terminal", []string{"terminal"}, ToolOK)
	m.CronRun(ctx, "missed")
	tel.ClientMetricsHandler().WithTags(map[string]string{"choice": "once"}).Counter(MetricApprovals).Inc(1)

	body := scrape(t, tel)
	for _, want := range []string{
		`talaria_turns_total{otel_scope_name="talaria",otel_scope_version="",stop_reason="text_response"} 1`,
		`talaria_turns_total{otel_scope_name="talaria",otel_scope_version="",stop_reason="other"} 1`,
		`talaria_model_calls_total{otel_scope_name="talaria",otel_scope_version="",outcome="ok",provider="openai"} 1`,
		`talaria_model_call_seconds_bucket{otel_scope_name="talaria",otel_scope_version="",outcome="ok",provider="openai",le="2.5"} 1`,
		`talaria_model_call_seconds_bucket{otel_scope_name="talaria",otel_scope_version="",outcome="ok",provider="openai",le="1"} 0`,
		`talaria_tokens_total{kind="prompt",otel_scope_name="talaria",otel_scope_version=""} 120`,
		`talaria_tool_calls_total{otel_scope_name="talaria",otel_scope_version="",outcome="ok",tool="terminal"} 1`,
		`talaria_cost_usd_total{otel_scope_name="talaria",otel_scope_version="",provider="anthropic"} 0.75`,
		`talaria_cron_runs_total{otel_scope_name="talaria",otel_scope_version="",status="missed"} 1`,
		`talaria_approvals_total{choice="once",otel_scope_name="temporal-sdk",otel_scope_version=""} 1`,
		`talaria_process="worker"`,
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, leak := range []string{"sk-abc", "api.openai.com", "made up", `kind="completion"`} {
		if strings.Contains(body, leak) {
			t.Errorf("/metrics holds %q", leak)
		}
	}
}

func TestMetricsListenerAnswersOnlyMetrics(t *testing.T) {
	ctx := context.Background()
	tel, err := New(ctx, WithMetrics(true))
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(ctx)
	srv, err := tel.Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := strings.TrimSuffix(srv.URL(), MetricsPath)
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/", http.StatusNotFound},
		{http.MethodGet, "/debug/pprof/", http.StatusNotFound},
		{http.MethodGet, "/metrics/", http.StatusNotFound},
		{http.MethodPost, "/metrics", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/metrics", http.StatusMethodNotAllowed},
		{http.MethodHead, "/metrics", http.StatusOK},
	} {
		req, _ := http.NewRequest(c.method, base+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.want)
		}
	}

	// The address is now taken: a second listener there fails, in one line.
	addr := strings.TrimPrefix(base, "http://")
	_, err = tel.Serve(addr)
	if !errors.Is(err, ErrListen) || !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Serve(%s) again: %v, want one line wrapping ErrListen naming the address", addr, err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("the listener still accepts after Close")
	}
}

func TestOffIsNil(t *testing.T) {
	tel, err := New(context.Background(), WithTracesFromEnv(func(string) string { return "" }))
	if err != nil || tel != nil {
		t.Fatalf("New with nothing on = %v, %v; want nil, nil", tel, err)
	}
	// Every method of the nil telemetry is a no-op.
	tel.Metrics().TurnEnded(context.Background(), "text_response")
	if tel.MetricsOn() || tel.TracesOn() || tel.Meter(ScopeServer) != nil || tel.ClientMetricsHandler() != nil || tel.Handler() != nil {
		t.Fatal("a nil telemetry reports something on")
	}
	if i, err := tel.ClientInterceptors("TurnWorkflow"); err != nil || len(i) != 0 {
		t.Fatalf("ClientInterceptors of nil = %v, %v", i, err)
	}
	if _, err := tel.Serve("127.0.0.1:0"); !errors.Is(err, ErrListen) {
		t.Fatalf("Serve of nil: %v", err)
	}
}

func TestMalformedResourceAttributesDoNotStopMetrics(t *testing.T) {
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "this is=not,well formed%")
	if _, err := processResource(context.Background(), "serve"); err == nil {
		t.Fatal("the malformed attributes are read without an error: the test tests nothing")
	}
	tel, err := New(context.Background(), WithMetrics(true), WithProcess("serve"))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer tel.Shutdown(context.Background())
	if body := scrape(t, tel); !strings.Contains(body, `talaria_process="serve"`) {
		t.Fatal("the process is not named in target_info")
	}
}

func TestExportErrorsAreQuiet(t *testing.T) {
	var buf strings.Builder
	now := time.Unix(1000, 0)
	q := &quietErrors{logger: slog.New(slog.NewTextHandler(&buf, nil)), now: func() time.Time { return now }}
	for range 5 {
		q.Handle(errors.New("connection refused"))
	}
	now = now.Add(errorEvery)
	q.Handle(errors.New("connection refused"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "similar_errors_not_shown=4") {
		t.Fatalf("logged:\n%s\nwant the first error, then one a minute later counting the 4 left out", buf.String())
	}
}
