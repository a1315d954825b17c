package config

import (
	"fmt"
	"net/url"
	"strings"
)

// Auxiliary is a second model, usually a small and cheap one, for the
// engine's side jobs; without it they are skipped. Today it has one job:
// with memory.recall on the built-in provider, it writes questions like a
// turn's message, and recall searches past conversations with them too
// (query expansion), within the prefetch budget.
type Auxiliary struct {
	// ProviderOptions: provider is the wire format (openai, the default;
	// anthropic, responses, ollama).
	ProviderOptions `yaml:",inline"`
	// BaseURL of the endpoint; empty: the provider's own.
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv names the variable holding the endpoint's key, read by the
	// worker; it never reaches a tool's subprocess.
	APIKeyEnv string `yaml:"api_key_env"`
	// Model is the model id asked; the auxiliary model is on when it is
	// set.
	Model string `yaml:"model"`
}

// Configured reports whether an auxiliary model is set.
func (a Auxiliary) Configured() bool { return strings.TrimSpace(a.Model) != "" }

// Endpoint is the effective base URL: the provider's own when empty.
func (a Auxiliary) Endpoint() string {
	if a.BaseURL != "" {
		return strings.TrimRight(a.BaseURL, "/")
	}
	return a.DefaultEndpoint()
}

// problems lists what is wrong with the auxiliary model's settings. Pure.
func (a Auxiliary) problems() []string {
	set := a.BaseURL != "" || a.APIKeyEnv != "" || a.Provider != "" || len(a.APIKeys) > 0
	if !a.Configured() {
		if set {
			return []string{"auxiliary.model must name the model to ask (the other auxiliary settings are unused without it)"}
		}
		return nil
	}
	out := a.ProviderOptions.problems("auxiliary")
	if a.BaseURL != "" {
		if u, err := url.Parse(a.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			out = append(out, fmt.Sprintf("auxiliary.base_url %q must be an http(s) URL", a.BaseURL))
		}
	}
	if a.APIKeyEnv != "" && strings.ContainsAny(a.APIKeyEnv, "= \t") {
		out = append(out, fmt.Sprintf("auxiliary.api_key_env %q must be a variable name", a.APIKeyEnv))
	}
	return out
}
