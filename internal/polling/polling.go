// Package polling sets how Talaria's workers poll Temporal for tasks.
//
// The SDK's default is two pollers per task queue for workflow tasks and
// two for activity tasks. A burst of new sessions needs several workflow
// tasks each before its first model call, and two pollers held it to
// about 25 handoffs a second with the process under one core busy
// (BenchmarkGatewayBurst, docs/benchmarks.md). The SDK's autoscaling
// pollers grow with the backlog the server reports on each poll and
// shrink when it is gone.
package polling

import "go.temporal.io/sdk/worker"

// Tune sets o's workflow and activity task pollers to scale with the
// load, within the SDK's defaults (at least one, at most 100 each).
func Tune(o *worker.Options) {
	o.WorkflowTaskPollerBehavior = worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{})
	o.ActivityTaskPollerBehavior = worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{})
}
