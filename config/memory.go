package config

import (
	"fmt"
	"net/url"
	"slices"
	"time"
)

// Memory providers.
const (
	MemoryRecall      = "recall"
	MemoryHoncho      = "honcho"
	MemoryMem0        = "mem0"
	MemorySupermemory = "supermemory"
)

// MemoryProviders are the memory providers, in the order they are
// documented.
var MemoryProviders = []string{MemoryRecall, MemoryHoncho, MemoryMem0, MemorySupermemory}

// Defaults of memory recall.
const (
	DefaultPrefetchBudget = 800 * time.Millisecond
	DefaultSummaryIdle    = time.Hour
	// DefaultRecallBytes bounds the block of recalled text one call carries.
	DefaultRecallBytes = 4000
)

// Memory configures recall across sessions, beyond the memory files
// (which are always on): off by default.
type Memory struct {
	// Recall turns recall on: before a turn's first model call, what past
	// sessions hold that bears on the message is found and shown to the
	// model (off by default).
	Recall bool `yaml:"recall"`
	// Provider is where recall comes from: recall (the default: session
	// summaries and transcripts in Talaria's own store), honcho, mem0 or
	// supermemory.
	Provider string `yaml:"provider"`
	// PrefetchBudget is the longest a prefetch may delay a turn's first
	// model call (default 800ms); a slower one is skipped, with a notice.
	PrefetchBudget time.Duration `yaml:"prefetch_budget"`
	// SummaryIdle: a session idle this long is over, and summarised
	// (default 1h).
	SummaryIdle time.Duration `yaml:"summary_idle"`
	// MaxBytes bounds the recalled block (default 4000).
	MaxBytes int `yaml:"max_bytes"`
	// Embeddings is an OpenAI-compatible /v1/embeddings endpoint: with it,
	// recall also searches by meaning.
	Embeddings Endpoint `yaml:"embeddings"`
	// The external providers' endpoints.
	Honcho      Endpoint `yaml:"honcho"`
	Mem0        Endpoint `yaml:"mem0"`
	Supermemory Endpoint `yaml:"supermemory"`
}

// Endpoint is an HTTP service: where it is, the variable holding its key
// (never reaching a tool's subprocess), and for model services the model.
type Endpoint struct {
	BaseURL   string `yaml:"base_url"`
	APIKeyEnv string `yaml:"api_key_env"`
	Model     string `yaml:"model"`
	// Workspace names the memory's space at a provider that has them
	// (Honcho's workspace; empty: "talaria").
	Workspace string `yaml:"workspace"`
}

// ProviderName is the memory provider in use ("" when recall is off).
func (m Memory) ProviderName() string {
	if !m.Recall {
		return ""
	}
	if m.Provider == "" {
		return MemoryRecall
	}
	return m.Provider
}

// problems lists what is wrong with the memory settings. Pure.
func (m Memory) problems() []string {
	var out []string
	if m.Provider != "" && !slices.Contains(MemoryProviders, m.Provider) {
		out = append(out, fmt.Sprintf("memory.provider %q is not one of %v", m.Provider, MemoryProviders))
	}
	if m.PrefetchBudget < 0 || m.SummaryIdle < 0 || m.MaxBytes < 0 {
		out = append(out, "memory.prefetch_budget, summary_idle and max_bytes must not be negative")
	}
	for name, e := range map[string]Endpoint{"embeddings": m.Embeddings, "honcho": m.Honcho, "mem0": m.Mem0, "supermemory": m.Supermemory} {
		if e.BaseURL == "" {
			continue
		}
		if u, err := url.Parse(e.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			out = append(out, fmt.Sprintf("memory.%s.base_url %q must be an http(s) URL", name, e.BaseURL))
		}
	}
	slices.Sort(out)
	return out
}

// Budget is the prefetch budget, defaulted.
func (m Memory) Budget() time.Duration {
	if m.PrefetchBudget > 0 {
		return m.PrefetchBudget
	}
	return DefaultPrefetchBudget
}

// Idle is the idle time after which a session is over, defaulted.
func (m Memory) Idle() time.Duration {
	if m.SummaryIdle > 0 {
		return m.SummaryIdle
	}
	return DefaultSummaryIdle
}

// Bytes bounds the recalled block, defaulted.
func (m Memory) Bytes() int {
	if m.MaxBytes > 0 {
		return m.MaxBytes
	}
	return DefaultRecallBytes
}
