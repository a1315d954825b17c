// Package telemetry holds a Talaria process's metrics and traces.
//
// Metrics: one Prometheus registry per process (New with WithMetrics). The
// Temporal SDK's metrics (through the SDK's OpenTelemetry handler), the
// embedded Temporal server's metrics and Talaria's own (Metrics) are
// OpenTelemetry instruments of one meter provider read by one Prometheus
// exporter bound to that registry; Serve answers GET /metrics in the
// Prometheus text format and nothing else. Talaria's own series:
//
//	talaria_turns_total{stop_reason}
//	talaria_model_calls_total{provider,outcome}
//	talaria_model_call_seconds{provider,outcome}   (histogram)
//	talaria_tokens_total{kind}
//	talaria_cost_usd_total{provider}               (at the models' prices)
//	talaria_tool_calls_total{tool,outcome}
//	talaria_approvals_total{choice}                 (counted in workflow code, replay-safe)
//	talaria_cron_runs_total{status}
//
// Every label value is bounded: a provider is a class of endpoint host
// (ProviderClass), never a URL; a tool is a registry name or "other"; the
// other labels are closed sets with "other" for anything else. No label
// ever holds message text, arguments or a secret.
//
// Traces are off unless the standard OpenTelemetry variables name an OTLP
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
// OTEL_EXPORTER_OTLP_PROTOCOL grpc or http/protobuf, the default). Then the
// Temporal SDK's tracing interceptor traces workflows and activities, each
// turn as a trace of its own (linked to its session's), and the model call's
// HTTP request and every tool call are spans inside it. Off, nothing is
// installed: no exporter, no interceptor, no wrapped transport.
package telemetry
