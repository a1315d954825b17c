package engine

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/modelinfo"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/workflows"
)

// ModelConfig holds the model configuration a worker's model calls use:
// the endpoint, key, model name, limits and fallbacks. It is read at each
// model call, so a serve that reloads config.yaml (Set) changes the model
// of new calls without a restart. A turn that names its own model (chat
// -m, a cron job's --model) keeps that name; everything else is the
// worker's.
type ModelConfig struct {
	mu        sync.RWMutex
	model     config.Model
	fallbacks []config.Provider
	// meta is what is known of the models (modelmeta.go); discoverer
	// keeps what endpoints told across reloads.
	meta       modelMeta
	discoverer *modelinfo.Discoverer
}

// NewModelConfig holds cfg's model settings.
func NewModelConfig(cfg config.Config) *ModelConfig {
	m := &ModelConfig{}
	m.Set(cfg)
	return m
}

// Set replaces the model settings with cfg's (already validated).
func (m *ModelConfig) Set(cfg config.Config) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.model, m.fallbacks = cfg.Model, slices.Clone(cfg.FallbackProviders)
	m.setMeta(cfg)
}

// Current returns the model settings and fallbacks in use.
func (m *ModelConfig) Current() (config.Model, []config.Provider) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.model, slices.Clone(m.fallbacks)
}

// Providers resolves the endpoints for a model name (empty: the configured
// model): the primary, then the fallbacks in order.
func (m *ModelConfig) Providers(model string) ([]llm.Endpoint, error) {
	cur, fallbacks := m.Current()
	list, err := providerList(cur, fallbacks, model)
	if err != nil {
		return nil, err
	}
	// Ollama endpoints are sent their model's window (num_ctx).
	return m.withExtraBody(list, cur, fallbacks), nil
}

// Worker is what BeginTurn reports to a turn and the activities read for
// each request.
func (m *ModelConfig) Worker() turnapi.WorkerModel {
	cur, _ := m.Current()
	return turnapi.WorkerModel{Name: cur.Name, Timeout: cur.Timeout, MaxRetryAfter: cur.MaxRetryAfter,
		Attempts: cur.Attempts, Stream: cur.Streaming(), MaxTokens: cur.MaxTokens}
}

// Settings is the masked view of the settings in use.
func (m *ModelConfig) Settings() ModelSettings {
	cur, fallbacks := m.Current()
	return SettingsOf(config.Config{Model: cur, FallbackProviders: fallbacks})
}

// providerList is the provider list of a model configuration. Pure.
func providerList(cur config.Model, fallbacks []config.Provider, model string) ([]llm.Endpoint, error) {
	if !cur.Configured() {
		return nil, errors.New(NoEndpointHelp)
	}
	model = cmp.Or(model, cur.Name)
	list := []llm.Endpoint{endpointOf(cur.ProviderOptions, cur.Endpoint(), cur.Keys(), model)}
	for _, f := range fallbacks {
		name := cmp.Or(f.Model, model)
		list = append(list, endpointOf(f.ProviderOptions, f.Endpoint(), f.Keys(), name))
	}
	return list, nil
}

// endpointOf is the endpoint of a configured provider. Pure.
func endpointOf(o config.ProviderOptions, baseURL string, keys []string, model string) llm.Endpoint {
	e := llm.Endpoint{Wire: llm.Wire(o.Wire()), BaseURL: baseURL, Keys: keys, Model: model,
		Caching: o.Caching, ThinkingBudget: o.ThinkingBudget, ReasoningEffort: o.ReasoningEffort}
	if len(keys) > 0 {
		e.APIKey = keys[0]
	}
	return e
}

// ModelSettings are the model settings a process uses, as shown to users:
// whether a key is set, never the key.
type ModelSettings struct {
	Configured    bool               `json:"configured"`
	Provider      string             `json:"provider"`
	BaseURL       string             `json:"base_url"`
	Model         string             `json:"model"`
	APIKeySet     bool               `json:"api_key_set"`
	APIKeyEnv     string             `json:"api_key_env,omitempty"`
	Stream        bool               `json:"stream"`
	MaxTokens     int                `json:"max_tokens,omitempty"`
	Timeout       string             `json:"timeout"`
	MaxRetryAfter string             `json:"max_retry_after"`
	Attempts      int                `json:"attempts"`
	Fallbacks     []FallbackSettings `json:"fallback_providers,omitempty"`
}

// FallbackSettings show one fallback provider.
type FallbackSettings struct {
	Provider  string `json:"provider"`
	BaseURL   string `json:"base_url"`
	Model     string `json:"model,omitempty"`
	APIKeySet bool   `json:"api_key_set"`
}

// SettingsOf is cfg's model settings as shown: no key, and URLs with
// their credentials redacted (RedactURL). Pure.
func SettingsOf(cfg config.Config) ModelSettings {
	m := cfg.Model
	s := ModelSettings{Configured: m.Configured(), Provider: m.Wire(), BaseURL: llm.RedactURL(m.Endpoint()), Model: m.Name, APIKeySet: len(m.Keys()) > 0,
		APIKeyEnv: m.APIKeyEnv, Stream: m.Streaming(), MaxTokens: m.MaxTokens,
		Timeout:       orDefault(m.Timeout, workflows.DefaultModelTimeout).String(),
		MaxRetryAfter: orDefault(m.MaxRetryAfter, workflows.DefaultMaxRetryAfter).String(),
		Attempts:      orDefault(m.Attempts, workflows.DefaultModelAttempts)}
	if !s.Configured {
		s.BaseURL = ""
	}
	for _, f := range cfg.FallbackProviders {
		s.Fallbacks = append(s.Fallbacks, FallbackSettings{Provider: f.Wire(), BaseURL: llm.RedactURL(f.Endpoint()), Model: f.Model, APIKeySet: len(f.Keys()) > 0})
	}
	return s
}

// orDefault is v, or def when v is unset (not positive): the value a turn
// uses, as the workflow fills it in. Pure.
func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Summary is the one-line form: "model X at URL".
func (s ModelSettings) Summary() string {
	if !s.Configured {
		return "no model endpoint configured"
	}
	return fmt.Sprintf("model %s at %s", s.Model, s.BaseURL)
}

// liveKeys are the configuration keys a running serve applies to new model
// calls when config.yaml changes.
var liveKeys = []string{"model", "fallback_providers", "models", "prices", "OPENAI_API_KEY", "OPENAI_BASE_URL", "TALARIA_MODEL",
	"TALARIA_PROVIDER", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"}

// clientKeys are the configuration keys serve does not use: they shape
// what a client (chat, send) does while it waits on a turn, read by each
// client at its start, so a change needs no restart of serve and is not
// named as needing one. Every key in neither list needs a restart of serve.
//   - approvals.noninteractive: what chat -q without a terminal does when
//     a turn asks for an approval;
//   - busy_input_mode: what a message typed while a turn runs does.
var clientKeys = []string{"approvals.noninteractive", "busy_input_mode"}

// ConfigChanges compares two configurations and lists the keys that
// changed, split into those applied live (the model settings) and those a
// running serve applies only after a restart; keys only clients read
// (clientKeys) are in neither. Values are never listed (they may be
// secrets). Pure.
func ConfigChanges(old, next config.Config) (live, restart []string, err error) {
	a, err := flatConfig(old)
	if err != nil {
		return nil, nil, err
	}
	b, err := flatConfig(next)
	if err != nil {
		return nil, nil, err
	}
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for k := range keys {
		if a[k] == b[k] || slices.Contains(clientKeys, k) {
			continue
		}
		if isLive(k) {
			live = append(live, k)
		} else {
			restart = append(restart, k)
		}
	}
	sort.Strings(live)
	sort.Strings(restart)
	return live, restart, nil
}

func isLive(key string) bool {
	top, _, _ := strings.Cut(key, ".")
	return slices.Contains(liveKeys, top)
}

// flatConfig maps each leaf key of cfg (as config.yaml spells it, dotted)
// to its YAML encoding; a list is one leaf.
func flatConfig(cfg config.Config) (map[string]string, error) {
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode configuration: %w", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("decode configuration: %w", err)
	}
	out := map[string]string{}
	if len(root.Content) > 0 {
		flatten(root.Content[0], "", out)
	}
	return out, nil
}

func flatten(n *yaml.Node, prefix string, out map[string]string) {
	if n.Kind != yaml.MappingNode {
		data, _ := yaml.Marshal(n)
		out[prefix] = string(data)
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		if prefix != "" {
			key = prefix + "." + key
		}
		flatten(n.Content[i+1], key, out)
	}
}

// ServeSettings are the model settings a serve published; a serve from
// before they were published gives what its older fields say.
func ServeSettings(info ServeInfo) ModelSettings {
	if info.ModelSettings != nil {
		return *info.ModelSettings
	}
	s := ModelSettings{Configured: info.ModelConfigured, Model: info.Model}
	if s.Configured {
		s.BaseURL = llm.RedactURL(info.ModelEndpoint)
	}
	return s
}
