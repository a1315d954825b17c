package modelinfo

import (
	"context"
	"maps"
	"slices"
	"strings"
)

// Source says where a piece of what is known of a model comes from.
type Source string

// The sources, in order of precedence.
const (
	// FromConfig is the configuration's models: (or prices:) entry.
	FromConfig Source = "config"
	// FromDiscovery is what the endpoint told (its model list, Ollama's
	// /api/show).
	FromDiscovery Source = "discovered"
	// FromBundled is the bundled table.
	FromBundled Source = "bundled"
	// FromNowhere: nothing is known.
	FromNowhere Source = "unknown"
)

// Resolved is what is known of a model and where each part comes from.
type Resolved struct {
	Info
	ContextWindowFrom Source `json:"context_window_from"`
	MaxOutputFrom     Source `json:"max_output_from"`
	PriceFrom         Source `json:"price_from"`
	VisionFrom        Source `json:"vision_from"`
}

// Catalog answers what is known of a model, part by part (window, output
// cap, price, vision) in order of precedence: the configuration's overrides, what
// the endpoint tells (discovery), the bundled table. A nil Catalog knows
// only the bundled table.
type Catalog struct {
	overrides map[string]Info
	// lower and normal index the overrides by lower-case and normalised
	// name, for a model spelt otherwise.
	lower, normal map[string]string
	discover      *Discoverer
}

// NewCatalog is a catalog of the configuration's overrides (by model
// name), asking d for what they leave unknown (nil d: no discovery).
func NewCatalog(overrides map[string]Info, d *Discoverer) *Catalog {
	c := &Catalog{overrides: map[string]Info{}, lower: map[string]string{}, normal: map[string]string{}, discover: d}
	names := slices.Sorted(maps.Keys(overrides))
	for _, name := range names {
		c.overrides[name] = overrides[name]
		if _, ok := c.lower[strings.ToLower(name)]; !ok {
			c.lower[strings.ToLower(name)] = name
		}
		// A name without date, tag or vendor covers its variants.
		if n := Normalize(name); n == strings.ToLower(name) {
			if _, ok := c.normal[n]; !ok {
				c.normal[n] = name
			}
		}
	}
	return c
}

// Override is the configured entry of model: the one under its very name,
// else under its name in another case, else under its normalised name
// when that name is written plain: gpt-4o covers gpt-4o-2024-08-06 and
// openai/gpt-4o, llama3.1 covers llama3.1:8b (llama3.1:8b does not cover
// llama3.1:70b).
func (c *Catalog) Override(model string) (Info, bool) {
	if c == nil {
		return Info{}, false
	}
	if i, ok := c.overrides[model]; ok {
		return i, true
	}
	if name, ok := c.lower[strings.ToLower(model)]; ok {
		return c.overrides[name], true
	}
	if name, ok := c.normal[Normalize(model)]; ok {
		return c.overrides[name], true
	}
	return Info{}, false
}

// Info is what the configuration and the bundled table know of model,
// without asking any endpoint.
func (c *Catalog) Info(model string) Resolved {
	over, _ := c.Override(model)
	table, _ := Bundled(model)
	return resolve(layer{over, FromConfig}, layer{table, FromBundled})
}

// Lookup is what is known of t's model, asking t's endpoint (once per
// process) for what the configuration does not say.
func (c *Catalog) Lookup(ctx context.Context, t Target) Resolved {
	over, _ := c.Override(t.Model)
	table, _ := Bundled(t.Model)
	var found Info
	if c != nil && !complete(over) {
		found, _ = c.discover.Discover(ctx, t)
	}
	return resolve(layer{over, FromConfig}, layer{found, FromDiscovery}, layer{table, FromBundled})
}

// ExtraBody is what t's requests carry on top of their own fields: for an
// Ollama endpoint whose window the configuration or the server tells,
// {"options": {"num_ctx": N}}, so that the server runs the model with the
// whole window; nil otherwise.
func (c *Catalog) ExtraBody(ctx context.Context, t Target) map[string]any {
	if !t.IsOllama() {
		return nil
	}
	r := c.Lookup(ctx, t)
	return OllamaExtraBody(r)
}

// OllamaExtraBody is the num_ctx option for r's window when it comes from
// the configuration or the server (a bundled window is another server's);
// nil when none does. Pure.
func OllamaExtraBody(r Resolved) map[string]any {
	if r.ContextWindow <= 0 || (r.ContextWindowFrom != FromConfig && r.ContextWindowFrom != FromDiscovery) {
		return nil
	}
	return map[string]any{"options": map[string]any{"num_ctx": r.ContextWindow}}
}

// complete reports whether i leaves nothing to discover.
func complete(i Info) bool {
	return i.ContextWindow > 0 && i.MaxOutput > 0 && i.Price.Known() && i.Vision != nil
}

// layer is one source's information.
type layer struct {
	info Info
	from Source
}

// resolve takes each part from the first layer that knows it. Pure.
func resolve(layers ...layer) Resolved {
	r := Resolved{ContextWindowFrom: FromNowhere, MaxOutputFrom: FromNowhere, PriceFrom: FromNowhere, VisionFrom: FromNowhere}
	for _, l := range layers {
		if r.ContextWindow == 0 && l.info.ContextWindow > 0 {
			r.ContextWindow, r.ContextWindowFrom = l.info.ContextWindow, l.from
		}
		if r.MaxOutput == 0 && l.info.MaxOutput > 0 {
			r.MaxOutput, r.MaxOutputFrom = l.info.MaxOutput, l.from
		}
		if !r.Price.Known() && l.info.Price.Known() {
			r.Price, r.PriceFrom = l.info.Price, l.from
		}
		if r.Vision == nil && l.info.Vision != nil {
			r.Vision, r.VisionFrom = Bool(*l.info.Vision), l.from
		}
	}
	return r
}
