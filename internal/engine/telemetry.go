package engine

import (
	"context"

	"go.temporal.io/sdk/client"

	"github.com/talaria-agent/talaria/internal/telemetry"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/scheduler"
	"github.com/talaria-agent/talaria/workflows"
)

// ClientOption adjusts the options of a Temporal client before it dials.
type ClientOption func(*client.Options)

// clientTelemetry reports the client's (and its worker's) metrics to tel
// and traces its workflows and activities there, each turn a trace of its
// own. None when tel is nil.
func clientTelemetry(tel *telemetry.Telemetry) ([]ClientOption, error) {
	interceptors, err := tel.ClientInterceptors(workflows.TurnWorkflowName)
	if err != nil {
		return nil, err
	}
	handler := tel.ClientMetricsHandler()
	if handler == nil && len(interceptors) == 0 {
		return nil, nil
	}
	return []ClientOption{func(o *client.Options) {
		if handler != nil {
			o.MetricsHandler = handler
		}
		o.Interceptors = append(o.Interceptors, interceptors...)
	}}, nil
}

// countTick counts the slots a tick recorded missed or skipped (those it
// started are counted when their run finishes, by FinishCronRun).
func countTick(ctx context.Context, m *telemetry.Metrics) func(scheduler.Result, error) {
	return func(res scheduler.Result, _ error) {
		for range res.Missed {
			m.CronRun(ctx, models.RunMissed)
		}
		for range res.Skipped {
			m.CronRun(ctx, models.RunSkipped)
		}
	}
}
