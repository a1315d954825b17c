package embedded

import (
	"testing"

	"go.temporal.io/server/common/dynamicconfig"
)

func TestDefaultDynamicConfigKeys(t *testing.T) {
	cfg := defaultDynamicConfig
	for _, key := range []string{
		"history.transferProcessorMaxPollRPS",
		"history.timerProcessorMaxPollRPS",
		"history.visibilityProcessorMaxPollRPS",
		"history.outboundProcessorMaxPollRPS",
		"matching.numTaskqueueReadPartitions",
		"matching.numTaskqueueWritePartitions",
		"history.externalPayloadsEnabled",
	} {
		k := dynamicconfig.MakeKey(key).String()
		if _, ok := cfg[k]; !ok {
			t.Errorf("defaultDynamicConfig lacks %s", key)
		}
	}
}

func TestBuildDynamicConfig(t *testing.T) {
	parts := dynamicconfig.MatchingNumTaskqueueReadPartitions.Key()

	tuned := buildDynamicConfig(false)
	if got := tuned.GetValue(parts); len(got) != 1 || got[0].Value != 1 {
		t.Errorf("tuned partitions = %v, want 1", got)
	}

	external := tuned.GetValue(dynamicconfig.ExternalPayloadsEnabled.Key())
	if len(external) != 1 || external[0].Value != false {
		t.Errorf("tuned external payloads = %v, want off", external)
	}

	untuned := buildDynamicConfig(true)
	if got := untuned.GetValue(parts); got != nil {
		t.Errorf("untuned partitions = %v, want server default", got)
	}
}
