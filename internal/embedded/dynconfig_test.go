package embedded

import (
	"testing"

	"go.temporal.io/server/common/dynamicconfig"
)

func TestDefaultDynamicConfigKeys(t *testing.T) {
	cfg := DefaultDynamicConfig()
	for _, key := range []string{
		"history.transferProcessorMaxPollRPS",
		"history.timerProcessorMaxPollRPS",
		"history.visibilityProcessorMaxPollRPS",
		"history.outboundProcessorMaxPollRPS",
		"matching.numTaskqueueReadPartitions",
		"matching.numTaskqueueWritePartitions",
	} {
		k := dynamicconfig.MakeKey(key).String()
		if _, ok := cfg[k]; !ok {
			t.Errorf("DefaultDynamicConfig lacks %s", key)
		}
	}
	cfg["history.transferProcessorMaxPollRPS"] = -1
	if DefaultDynamicConfig()[dynamicconfig.MakeKey("history.transferProcessorMaxPollRPS").String()] != queuePollRPS {
		t.Error("DefaultDynamicConfig returned shared map")
	}
}

func TestBuildDynamicConfigOverrides(t *testing.T) {
	rps := dynamicconfig.TransferProcessorMaxPollRPS.Key()
	parts := dynamicconfig.MatchingNumTaskqueueReadPartitions.Key()

	tuned := buildDynamicConfig(false, map[string]any{"History.TransferProcessorMaxPollRPS": 55})
	if got := tuned.GetValue(rps); len(got) != 1 || got[0].Value != 55 {
		t.Errorf("override (mixed case) = %v, want 55", got)
	}
	if got := tuned.GetValue(parts); len(got) != 1 || got[0].Value != 1 {
		t.Errorf("tuned partitions = %v, want 1", got)
	}

	untuned := buildDynamicConfig(true, nil)
	if got := untuned.GetValue(parts); got != nil {
		t.Errorf("untuned partitions = %v, want server default", got)
	}
}
