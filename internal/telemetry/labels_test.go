package telemetry

import (
	"strings"
	"testing"
)

func TestProviderClass(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"", "openai"},
		{"https://api.openai.com/v1", "openai"},
		{"https://API.OpenAI.com./v1", "openai"},
		{"https://myres.openai.azure.com/openai/deployments/x", "azure"},
		{"https://openrouter.ai/api/v1", "openrouter"},
		{"https://generativelanguage.googleapis.com/v1beta/openai", "google"},
		{"https://api.groq.com/openai/v1", "groq"},
		{"http://localhost:11434/v1", ProviderLocal},
		{"http://127.0.0.1:8080/v1", ProviderLocal},
		{"http://[::1]:8080/v1", ProviderLocal},
		{"http://ollama.localhost/v1", ProviderLocal},
		{"http://10.1.2.3:8000/v1", ProviderPrivate},
		{"http://192.168.0.7/v1", ProviderPrivate},
		{"http://vllm:8000/v1", ProviderPrivate},
		{"http://llm.default.svc:8000/v1", ProviderPrivate},
		{"http://llm.default.svc.cluster.local/v1", ProviderPrivate},
		{"https://llm.corp.internal/v1", ProviderPrivate},
		{"https://user:sk-secret@llm.example.com/v1?key=sk-secret", Other},
		{"https://api.openai.com.evil.example/v1", Other},
		{"https://evilapi.openai.com.example/v1", Other},
		{"https://8.8.8.8/v1", Other},
		{"not a url", Other},
		{"://", Other},
	} {
		got := ProviderClass(tt.url)
		if got != tt.want {
			t.Errorf("ProviderClass(%q) = %q, want %q", tt.url, got, tt.want)
		}
		if strings.Contains(got, "secret") || strings.Contains(got, ".") || strings.Contains(got, ":") {
			t.Errorf("ProviderClass(%q) = %q: a label must not carry the endpoint", tt.url, got)
		}
	}
}

func TestBoundedLabels(t *testing.T) {
	known := []string{"terminal", "read_file"}
	for _, tt := range []struct {
		name      string
		got, want string
	}{
		{"registry tool", ToolLabel("terminal", known), "terminal"},
		{"tool the model made up", ToolLabel("terminal; rm -rf /", known), Other},
		{"empty tool", ToolLabel("", known), Other},
		{"tool with no registry", ToolLabel("terminal", nil), Other},
		{"stop reason", StopReasonLabel("text_response"), "text_response"},
		{"unknown stop reason", StopReasonLabel("because"), Other},
		{"model ok", ModelOutcomeLabel("ok"), "ok"},
		{"model error class", ModelOutcomeLabel("rate_limit"), "rate_limit"},
		{"model error text", ModelOutcomeLabel("HTTP 500: boom"), Other},
		{"token kind", TokenKindLabel(TokensReasoning), TokensReasoning},
		{"unknown token kind", TokenKindLabel("audio"), Other},
		{"tool outcome", ToolOutcomeLabel(ToolUnknown), ToolUnknown},
		{"unknown tool outcome", ToolOutcomeLabel("exploded"), Other},
		{"cron status", CronStatusLabel("failed"), "failed"},
		{"unknown cron status", CronStatusLabel("started"), Other},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestTracesConfigured(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"nothing set", nil, false},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{"blank endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "  "}, false},
		{"sdk disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "TRUE"}, false},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
	} {
		if got := TracesConfigured(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("%s: TracesConfigured = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestTracesProtocol(t *testing.T) {
	for _, tt := range []struct {
		general, traces string
		want            string
		ok              bool
	}{
		{"", "", protocolHTTP, true},
		{"grpc", "", protocolGRPC, true},
		{"grpc", "http/protobuf", protocolHTTP, true},
		{"", "GRPC", protocolGRPC, true},
		{"http/json", "", "", false},
	} {
		env := map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": tt.general, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": tt.traces}
		got, err := tracesProtocol(func(k string) string { return env[k] })
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("protocol %q/%q = %q, %v; want %q ok=%v", tt.general, tt.traces, got, err, tt.want, tt.ok)
		}
	}
}

func TestStartsTrace(t *testing.T) {
	roots := []string{"TurnWorkflow"}
	for _, tt := range []struct {
		span string
		want bool
	}{
		{"StartChildWorkflow:TurnWorkflow", true},
		{"StartChildWorkflow:MemoryReviewWorkflow", false},
		{"RunWorkflow:TurnWorkflow", false},
		{"StartActivity:CallModel", false},
		{"StartChildWorkflow:TurnWorkflowX", false},
	} {
		if got := startsTrace(tt.span, roots); got != tt.want {
			t.Errorf("startsTrace(%q) = %v, want %v", tt.span, got, tt.want)
		}
	}
}
