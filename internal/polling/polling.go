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
// load: between two (the SDK's fixed default, so an idle worker answers
// its next task as before) and MaxPollers each. With the sticky cache the
// SDK scales a worker's normal and sticky workflow pollers apart, so a
// worker polls at most 3 × MaxPollers at once. A server that sends no
// scaling decisions leaves them at two.
func Tune(o *worker.Options) {
	scaled := worker.PollerBehaviorAutoscalingOptions{InitialNumberOfPollers: 2, MinimumNumberOfPollers: 2, MaximumNumberOfPollers: MaxPollers}
	o.WorkflowTaskPollerBehavior = worker.NewPollerBehaviorAutoscaling(scaled)
	o.ActivityTaskPollerBehavior = worker.NewPollerBehaviorAutoscaling(scaled)
}

// MaxPollers bounds the pollers of each kind (normal workflow, sticky
// workflow, activity). A burst is waiting on
// round trips, not on the CPU, and a few more pollers overlap them; a
// machine whose CPU is busy gains nothing from more polls in flight, each
// of which the server serves too.
const MaxPollers = 8
