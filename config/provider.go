package config

import (
	"cmp"
	"fmt"
	"strings"
)

// Provider names of model.provider and fallback_providers[].provider.
const (
	// ProviderOpenAI speaks OpenAI chat completions: OpenAI, OpenRouter,
	// vLLM, llama.cpp and every OpenAI-compatible server (the default).
	ProviderOpenAI = "openai"
	// ProviderAnthropic speaks Anthropic Messages.
	ProviderAnthropic = "anthropic"
	// ProviderResponses speaks the OpenAI Responses API.
	ProviderResponses = "responses"
	// ProviderOllama speaks Ollama's native chat API (POST /api/chat),
	// whose context length is asked and sent (options.num_ctx) with each
	// request: Ollama's OpenAI-compatible endpoint ignores num_ctx.
	ProviderOllama = "ollama"
)

// Default endpoints of the providers that have one other than OpenAI's.
const (
	AnthropicEndpoint = "https://api.anthropic.com"
	OllamaEndpoint    = "http://localhost:11434/v1"
	OpenAIEndpoint    = "https://api.openai.com/v1"
)

// Providers lists the provider names, as documented.
var Providers = []string{ProviderOpenAI, ProviderAnthropic, ProviderResponses, ProviderOllama}

// ProviderOptions are what a model endpoint's wire format lets one set;
// the primary model and each fallback provider have them.
type ProviderOptions struct {
	// Provider is the wire format: openai (default), anthropic, responses
	// or ollama.
	Provider string `yaml:"provider"`
	// APIKeys is a pool of keys, tried in order: a key that is rate
	// limited or refused cools down and the next one is used.
	APIKeys []string `yaml:"api_keys"`
	// Caching is Anthropic's prompt cache layout: system_and_3 (the
	// default: the system prompt and the last three messages) or none.
	Caching string `yaml:"caching"`
	// ThinkingBudget turns on Anthropic extended thinking with this many
	// budget tokens (0: off).
	ThinkingBudget int `yaml:"thinking_budget"`
	// ReasoningEffort is the Responses API's reasoning effort: low,
	// medium or high (empty: the model's default).
	ReasoningEffort string `yaml:"reasoning_effort"`
}

// Wire is the wire format the provider speaks: openai, anthropic,
// responses or ollama (Ollama's native chat API); an unknown name is
// openai.
func (o ProviderOptions) Wire() string {
	switch p := o.providerName(); p {
	case ProviderAnthropic, ProviderResponses, ProviderOllama:
		return p
	}
	return ProviderOpenAI
}

// IsOllama reports whether the endpoint is an Ollama server.
func (o ProviderOptions) IsOllama() bool { return o.providerName() == ProviderOllama }

func (o ProviderOptions) providerName() string {
	return cmp.Or(strings.ToLower(strings.TrimSpace(o.Provider)), ProviderOpenAI)
}

// DefaultEndpoint is the provider's own endpoint, for a base_url left
// empty.
func (o ProviderOptions) DefaultEndpoint() string {
	switch o.providerName() {
	case ProviderAnthropic:
		return AnthropicEndpoint
	case ProviderOllama:
		return OllamaEndpoint
	}
	return OpenAIEndpoint
}

// Keys is the key pool: api_keys when set, else api_key split at commas
// (OPENAI_API_KEY=KEY_1,KEY_2), empty entries left out.
func Keys(key string, pool []string) []string {
	var out []string
	for _, k := range append(append([]string(nil), pool...), splitKeys(key, len(pool) > 0)...) {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// splitKeys is key as a list, unless a pool is set (then the pool holds
// every key and key is not one more).
func splitKeys(key string, pooled bool) []string {
	if pooled || key == "" {
		return nil
	}
	return strings.Split(key, ",")
}

// problems checks the options of the endpoint named where.
func (o ProviderOptions) problems(where string) []string {
	var out []string
	known := false
	for _, p := range Providers {
		known = known || o.providerName() == p
	}
	if !known {
		out = append(out, fmt.Sprintf("%s provider %q is not one of %s", where, o.Provider, strings.Join(Providers, ", ")))
	}
	switch o.Caching {
	case "", "system_and_3", "none":
	default:
		out = append(out, fmt.Sprintf("%s caching %q is not one of system_and_3, none", where, o.Caching))
	}
	if o.ThinkingBudget != 0 && o.ThinkingBudget < 1024 {
		out = append(out, fmt.Sprintf("%s thinking_budget must be at least 1024 tokens (or 0 for off), got %d", where, o.ThinkingBudget))
	}
	switch strings.ToLower(strings.TrimSpace(o.ReasoningEffort)) {
	case "", "minimal", "low", "medium", "high":
	default:
		out = append(out, fmt.Sprintf("%s reasoning_effort %q is not one of minimal, low, medium, high", where, o.ReasoningEffort))
	}
	return out
}
