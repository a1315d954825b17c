package engine

import (
	"cmp"
	"context"
	"log/slog"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/modelinfo"
)

// This file is what a worker knows of its models beside how to reach
// them: their context window, output cap, prices and vision, from the
// configuration (models:, prices:), what the endpoints tell (discovery,
// asked once per endpoint and model for the life of the process) and the
// bundled table. Ollama endpoints are sent the window as num_ctx.

// modelMeta is the model knowledge of one configuration.
type modelMeta struct {
	catalog *modelinfo.Catalog
	// window is compression.context_window when set (0: the model's).
	window int
}

// metaOf is cfg's model knowledge, asking d for what cfg does not say.
func metaOf(cfg config.Config, d *modelinfo.Discoverer) modelMeta {
	return modelMeta{catalog: modelinfo.NewCatalog(cfg.ModelOverrides(), d), window: cfg.Compression.ContextWindow}
}

// setMeta takes cfg's model knowledge, keeping the answers discovered
// so far (a reload does not ask the endpoints again); m.mu is held.
func (m *ModelConfig) setMeta(cfg config.Config) {
	m.discoverer = cmp.Or(m.discoverer, &modelinfo.Discoverer{})
	m.meta = metaOf(cfg, m.discoverer)
}

// SetLogger makes discovery failures go to l, at debug. Call it before
// the first model call.
func (m *ModelConfig) SetLogger(l *slog.Logger) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.discoverer = cmp.Or(m.discoverer, &modelinfo.Discoverer{})
	m.discoverer.Logger = l
}

// knowledge is the model knowledge in use, with the primary endpoint.
func (m *ModelConfig) knowledge() (modelMeta, config.Model) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.meta, m.model
}

// targetOf is the discovery target of a configured endpoint. Pure.
func targetOf(o config.ProviderOptions, baseURL string, keys []string, model string) modelinfo.Target {
	t := modelinfo.Target{Wire: llm.Wire(o.Wire()), BaseURL: baseURL, Model: model, Ollama: o.IsOllama()}
	if len(keys) > 0 {
		t.APIKey = keys[0]
	}
	return t
}

// ModelInfo is what is known of model (empty: the configured one) at the
// primary endpoint, and where each part comes from; the endpoint is asked
// (once per process) when the configuration leaves something unknown.
func (m *ModelConfig) ModelInfo(ctx context.Context, model string) modelinfo.Resolved {
	meta, cur := m.knowledge()
	model = cmp.Or(model, cur.Name)
	if !cur.Configured() {
		return meta.catalog.Info(model)
	}
	return meta.catalog.Lookup(ctx, targetOf(cur.ProviderOptions, cur.Endpoint(), cur.Keys(), model))
}

// ContextWindow is the context window turns of model (empty: the
// configured one) compact against: compression.context_window when set,
// else the model's as known (ModelInfo); 0 when unknown.
func (m *ModelConfig) ContextWindow(ctx context.Context, model string) int {
	meta, _ := m.knowledge()
	if meta.window > 0 {
		return meta.window
	}
	return m.ModelInfo(ctx, model).ContextWindow
}

// PriceAt is the price of the model an endpoint served, as this worker
// knows it: the configuration, what that endpoint tells (asked once per
// process: a fallback router's prices are its own), the bundled table.
func (m *ModelConfig) PriceAt(ctx context.Context, ep llm.Endpoint) (modelinfo.Price, bool) {
	meta, _ := m.knowledge()
	t := targetOf(config.ProviderOptions{Provider: string(ep.Wire)}, ep.BaseURL, ep.Keys, ep.Model)
	r := meta.catalog.Lookup(ctx, t)
	return r.Price, r.Price.Known()
}

// VisionAt reports whether the model an endpoint served takes pictures, as
// this worker knows it: the configuration, what that endpoint tells
// (asked once per process), the bundled table. Unknown is no: a model is
// shown pictures only when something says it sees.
func (m *ModelConfig) VisionAt(ctx context.Context, ep llm.Endpoint) bool {
	meta, _ := m.knowledge()
	t := targetOf(config.ProviderOptions{Provider: string(ep.Wire)}, ep.BaseURL, ep.Keys, ep.Model)
	return meta.catalog.Lookup(ctx, t).Sees()
}

// withExtraBody gives each Ollama endpoint of list (the primary, then the
// fallbacks, as providerList builds them) the num_ctx of its model's
// window; other endpoints are left as they are.
func (m *ModelConfig) withExtraBody(list []llm.Endpoint, cur config.Model, fallbacks []config.Provider) []llm.Endpoint {
	if len(list) != 1+len(fallbacks) {
		return list
	}
	meta, _ := m.knowledge()
	opts := []config.ProviderOptions{cur.ProviderOptions}
	for _, f := range fallbacks {
		opts = append(opts, f.ProviderOptions)
	}
	for i := range list {
		e := &list[i]
		t := targetOf(opts[i], e.BaseURL, e.Keys, e.Model)
		if !t.IsOllama() {
			continue
		}
		extra := meta.catalog.ExtraBody(context.Background(), t)
		if len(extra) == 0 {
			continue
		}
		merged := make(map[string]any, len(e.ExtraBody)+len(extra))
		for k, v := range e.ExtraBody {
			merged[k] = v
		}
		for k, v := range extra {
			if _, set := merged[k]; !set {
				merged[k] = v
			}
		}
		e.ExtraBody = merged
	}
	return list
}
