package embedded

import (
	"go.temporal.io/server/common/dynamicconfig"
)

// queuePollRPS replaces the server's default of 20 polls per second for each
// history queue reader (see defaultDynamicConfig).
const queuePollRPS = 10000

// defaultDynamicConfig holds the dynamic config values Start applies unless
// Options.UntunedDynamicConfig is set.
//
// The server's defaults target a multi-node cluster under heavy load; on a
// single embedded node they mostly add latency:
//
//   - history.{transfer,timer,visibility,outbound,archival}ProcessorMaxPollRPS
//     (default 20): each history queue reader is rate limited to 20 loads per
//     second. Every workflow step creates a transfer task (dispatch a workflow
//     or activity task), so a chain of sequential activities waits up to 50 ms
//     per hop on the limiter once its burst is spent. One node with one shard
//     gets nowhere near 10000 loads per second, so the limit no longer bites.
//   - matching.numTaskqueue{Read,Write}Partitions (default 4): tasks and polls
//     are spread over four partitions; a task that lands on a partition with
//     no waiting poller is forwarded or waits for the next poll round. With
//     one partition every task meets the worker's poll directly (sync match).
//   - system.forceSearchAttributesCacheRefreshOnRead stays false (the server
//     default; some development setups turn it on): true re-reads search
//     attribute metadata from the database on every visibility read.
//   - history.externalPayloadsEnabled (default true): the history service
//     walks every payload of every new batch of history events to count
//     those stored outside the history. Talaria stores none there (no
//     storage driver is configured), and the walk was 2-3 % of a busy
//     process's CPU and about 40 % of its goroutine stack growth (a profile
//     of BenchmarkThroughput).
//   - frontend.rps and frontend.namespaceRPS (default 2400 per instance):
//     this one frontend carries every request of the process, including
//     worker long polls and heartbeats of many agent turns, so they are raised
//     to keep bursts from being throttled.
//
// Left at server defaults on purpose: persistence QPS limits (9000 history,
// 3000 matching, 2000 frontend, 9000 visibility read/write) are far above
// what one SQLite connection delivers; limit.blobSize.error/warn (2 MiB/512
// KiB) bound payload sizes and are fine; eager workflow start and eager
// activity execution are already on by default.
var defaultDynamicConfig = map[string]any{
	dynamicconfig.TransferProcessorMaxPollRPS.Key().String():   queuePollRPS,
	dynamicconfig.TimerProcessorMaxPollRPS.Key().String():      queuePollRPS,
	dynamicconfig.VisibilityProcessorMaxPollRPS.Key().String(): queuePollRPS,
	dynamicconfig.OutboundProcessorMaxPollRPS.Key().String():   queuePollRPS,
	dynamicconfig.ArchivalProcessorMaxPollRPS.Key().String():   queuePollRPS,

	dynamicconfig.MatchingNumTaskqueueReadPartitions.Key().String():  1,
	dynamicconfig.MatchingNumTaskqueueWritePartitions.Key().String(): 1,

	dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key().String(): false,

	dynamicconfig.ExternalPayloadsEnabled.Key().String(): false,

	dynamicconfig.FrontendRPS.Key().String():                        10000,
	dynamicconfig.FrontendMaxNamespaceRPSPerInstance.Key().String(): 10000,
}

// buildDynamicConfig is the tuning defaults (none when untuned) as the
// server's static client.
func buildDynamicConfig(untuned bool) dynamicconfig.StaticClient {
	out := dynamicconfig.StaticClient{}
	if !untuned {
		for k, v := range defaultDynamicConfig {
			out[dynamicconfig.MakeKey(k)] = v
		}
	}
	return out
}
