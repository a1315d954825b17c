package embedded

import (
	"go.opentelemetry.io/otel/metric"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
)

// meterProvider hands the server's metrics handler the meter of
// Options.Meter; the process that owns the meter stops it.
type meterProvider struct{ meter metric.Meter }

func (p meterProvider) GetMeter() metric.Meter { return p.meter }
func (meterProvider) Stop(log.Logger)          {}

// serverMetrics is the server's metrics handler: o.Meter's when set (its
// timers in seconds), else none. A handler that cannot be made leaves the
// metrics off with a warning; the server runs on.
func serverMetrics(o Options) metrics.Handler {
	if o.Meter == nil {
		return metrics.NoopMetricsHandler
	}
	h, err := metrics.NewOtelMetricsHandler(newSlogLogger(o.Logger, o.LogLevel), meterProvider{o.Meter}, metrics.ClientConfig{}, true)
	if err != nil {
		o.Logger.Warn("embedded temporal: metrics off", "error", err)
		return metrics.NoopMetricsHandler
	}
	return h
}
