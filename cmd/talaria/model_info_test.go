package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/modelinfo"
)

func TestUSD(t *testing.T) {
	for v, want := range map[float64]string{0.15: "$0.15", 2.5: "$2.50", 0.075: "$0.075", 10: "$10.00", 0: "$0.00", 3.75: "$3.75"} {
		if got := usd(v); got != want {
			t.Errorf("usd(%g) = %q, want %q", v, got, want)
		}
	}
}

func TestPrintModelKnowledge(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    *modelinfo.Resolved
		want []string
	}{
		{"nothing to say", nil, nil},
		{"all known", &modelinfo.Resolved{
			Info:              modelinfo.Info{ContextWindow: 32768, MaxOutput: 4096, Price: modelinfo.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}},
			ContextWindowFrom: modelinfo.FromDiscovery, MaxOutputFrom: modelinfo.FromConfig, PriceFrom: modelinfo.FromBundled},
			[]string{"  context_window: 32768 tokens (discovered)\n", "  max_output: 4096 tokens (config)\n", "  vision: unknown",
				"  prices per million tokens (bundled): input $3.00, output $15.00, cache read $0.30, cache write $3.75\n"}},
		{"unknown", &modelinfo.Resolved{ContextWindowFrom: modelinfo.FromNowhere, PriceFrom: modelinfo.FromNowhere},
			[]string{"  context_window: unknown\n", "  prices: unknown"}},
		{"sees", &modelinfo.Resolved{Info: modelinfo.Info{Vision: modelinfo.Bool(true)}, VisionFrom: modelinfo.FromBundled},
			[]string{"  vision: yes (bundled)\n"}},
		{"does not see", &modelinfo.Resolved{Info: modelinfo.Info{Vision: modelinfo.Bool(false)}, VisionFrom: modelinfo.FromConfig},
			[]string{"  vision: no (config)\n"}},
	} {
		var b bytes.Buffer
		printModelKnowledge(&b, tt.r)
		if len(tt.want) == 0 && b.Len() != 0 {
			t.Errorf("%s: printed %q", tt.name, b.String())
		}
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: %q lacks %q", tt.name, b.String(), w)
			}
		}
		if strings.Contains(b.String(), "max_output") != (tt.r != nil && tt.r.MaxOutput > 0) {
			t.Errorf("%s: max_output line: %q", tt.name, b.String())
		}
	}
}
