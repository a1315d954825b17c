package sessionview

import (
	"testing"

	"github.com/talaria-agent/talaria/models"
)

func TestUsageCost(t *testing.T) {
	for _, tt := range []struct {
		name string
		rows []models.UsageRow
		want string
	}{
		{"nothing recorded", nil, ""},
		{"priced, cached", []models.UsageRow{{Calls: 4, PromptTokens: 1000, CacheReadTokens: 750, CostUSD: 0.0123}},
			" Cost: $0.01 for 4 model calls; 75% of the input came from the prompt cache."},
		{"one call, tiny", []models.UsageRow{{Calls: 1, PromptTokens: 10, CostUSD: 0.00004}}, " Cost: $0.0000 for 1 model call."},
		{"no price", []models.UsageRow{{Calls: 2, PromptTokens: 10, Unpriced: 2}},
			" Cost: unknown for 2 model calls (no price is known for the model: models: in config.yaml sets one)."},
		{"some unpriced", []models.UsageRow{{Calls: 2, CostUSD: 1.5}, {Calls: 1, Unpriced: 1}},
			" Cost: $1.50 for 3 model calls (1 without a known price)."},
	} {
		if got := usageCost(tt.rows); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
