package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

// flagMetricsListen is the metrics address flag of serve, worker,
// scheduler and temporal.
const flagMetricsListen = "metrics-listen"

// metricsHelp is what --help says about metrics and traces.
const metricsHelp = `With --metrics-listen ADDR (config metrics.listen) it serves Prometheus
metrics at http://ADDR/metrics: Talaria's own (talaria_turns_total,
talaria_model_calls_total, talaria_model_call_seconds, talaria_tokens_total,
talaria_tool_calls_total, talaria_approvals_total, talaria_cron_runs_total),
the Temporal SDK's and the embedded server's. The endpoint asks for no
credential: bind it where only your monitoring reaches it. With
OTEL_EXPORTER_OTLP_ENDPOINT set (and the other standard OTEL_ variables), each
turn is a trace there: its workflow, activities, model HTTP calls and tools.`

// addMetricsFlag adds --metrics-listen to c.
func addMetricsFlag(c *cobra.Command) {
	c.Flags().String(flagMetricsListen, "",
		"serve Prometheus metrics at http://ADDR/metrics (host:port, e.g. 127.0.0.1:9464; config metrics.listen; empty: off); no credential guards it")
}

// processTelemetry is a process's metrics and traces and the listener of
// its metrics.
type processTelemetry struct {
	tel    *talaria.Telemetry
	server *talaria.MetricsServer
}

// startTelemetry sets up the metrics cfg asks for (metrics.listen) and,
// when traces, the traces the OTEL_ variables ask for, and listens for
// scrapes. An address it cannot listen on is an error in one line.
func startTelemetry(ctx context.Context, name string, cfg config.Config, traces bool) (*processTelemetry, error) {
	opts := []talaria.TelemetryOption{talaria.WithMetrics(cfg.Metrics.Listen != ""), talaria.WithProcess(name),
		talaria.WithLogger(newLogger(cfg.LogLevel))}
	if traces {
		opts = append(opts, talaria.WithTracesFromEnv(os.Getenv))
	}
	tel, err := talaria.NewTelemetry(ctx, opts...)
	if err != nil {
		return nil, err
	}
	p := &processTelemetry{tel: tel}
	if cfg.Metrics.Listen == "" {
		return p, nil
	}
	if p.server, err = tel.Serve(cfg.Metrics.Listen); err != nil {
		_ = tel.Shutdown(ctx)
		if errors.Is(err, talaria.ErrMetricsListen) {
			return nil, fmt.Errorf("%w (set --%s or metrics.listen to a free address)", err, flagMetricsListen)
		}
		return nil, err
	}
	return p, nil
}

// Telemetry is the process's telemetry for talaria.Options (nil: none).
func (p *processTelemetry) Telemetry() *talaria.Telemetry {
	if p == nil {
		return nil
	}
	return p.tel
}

// Close stops the listener and flushes the spans not exported yet.
func (p *processTelemetry) Close() {
	if p == nil {
		return
	}
	_ = p.server.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.tel.Shutdown(ctx)
}

// ready is the ready line's mention of the metrics ("" when off).
func (p *processTelemetry) ready() string {
	if p == nil || p.server == nil {
		return ""
	}
	return ", metrics " + p.server.URL()
}
