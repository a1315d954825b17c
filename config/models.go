package config

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/talaria-agent/talaria/internal/modelinfo"
)

// Price is a model's price in US dollars per million tokens: input,
// output and, when the provider bills them otherwise, cache reads and
// writes (0: the input price).
type Price = modelinfo.Price

// ModelOverrides are the configuration's entries of what is known of
// models: models: as written, with the prices of prices: for the models
// whose models: entry names none. Pure.
func (c Config) ModelOverrides() map[string]modelinfo.Info {
	out := make(map[string]modelinfo.Info, len(c.Models)+len(c.Prices))
	for name, info := range c.Models {
		out[name] = info
	}
	for name, p := range c.Prices {
		info := out[name]
		if !info.Price.Known() {
			info.Price = p
		}
		out[name] = info
	}
	return out
}

// PriceOf is model's price: the configured one (models:, then prices:),
// else the bundled table's; false when neither knows it.
func (c Config) PriceOf(model string) (Price, bool) {
	r := modelinfo.NewCatalog(c.ModelOverrides(), nil).Info(model)
	return r.Price, r.Price.Known()
}

// minContextWindow is the smallest context window a model may be given
// (as for compression.context_window).
const minContextWindow = 1024

// modelProblems lists what is wrong with the models: and prices:
// entries, one line each, in name order.
func modelProblems(models map[string]modelinfo.Info, prices map[string]Price) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(models)) {
		m := models[name]
		where := fmt.Sprintf("models.%s", name)
		if name == "" {
			out = append(out, "models: an entry has an empty model name")
			where = "models.\"\""
		}
		switch {
		case m.ContextWindow < 0:
			out = append(out, fmt.Sprintf("%s.context_window must not be negative (0: unknown), got %d", where, m.ContextWindow))
		case m.ContextWindow > 0 && m.ContextWindow < minContextWindow:
			out = append(out, fmt.Sprintf("%s.context_window must be at least %d tokens (0: unknown), got %d", where, minContextWindow, m.ContextWindow))
		}
		if m.MaxOutput < 0 {
			out = append(out, fmt.Sprintf("%s.max_output must not be negative (0: unknown), got %d", where, m.MaxOutput))
		}
		if m.ContextWindow > 0 && m.MaxOutput >= m.ContextWindow {
			out = append(out, fmt.Sprintf("%s.max_output (%d) must be below context_window (%d)", where, m.MaxOutput, m.ContextWindow))
		}
		out = append(out, priceProblems(where, m.Price)...)
	}
	for _, name := range slices.Sorted(maps.Keys(prices)) {
		where := fmt.Sprintf("prices.%s", name)
		if name == "" {
			out = append(out, "prices: an entry has an empty model name")
			where = "prices.\"\""
		}
		out = append(out, priceProblems(where, prices[name])...)
	}
	return out
}

// priceProblems lists the prices of p that are negative or not numbers.
func priceProblems(where string, p Price) []string {
	var out []string
	for _, f := range []struct {
		key string
		v   float64
	}{{"input", p.Input}, {"output", p.Output}, {"cache_read", p.CacheRead}, {"cache_write", p.CacheWrite}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			out = append(out, fmt.Sprintf("%s.%s must be a price of 0 or more (US dollars per million tokens), got %g", where, f.key, f.v))
		}
	}
	return out
}
