package config

import (
	"net/url"
	"strings"
)

// applyKeyEnv applies the providers' own variables to the model and the
// fallbacks, so that a key goes only where it belongs:
//   - openai and responses read OPENAI_API_KEY and OPENAI_BASE_URL, as
//     they always did;
//   - anthropic reads ANTHROPIC_BASE_URL, and ANTHROPIC_API_KEY when the
//     endpoint is Anthropic's own or the one ANTHROPIC_BASE_URL names
//     (not a third-party Anthropic-compatible endpoint written in the
//     file), and not when api_key_env names another variable;
//   - ollama reads OPENAI_BASE_URL but no key variable: a local Ollama
//     wants none (a proxy that does gets api_key or api_key_env);
//   - a fallback without a key gets ANTHROPIC_API_KEY only when it is an
//     anthropic fallback at Anthropic's own endpoint.
func applyKeyEnv(cfg *Config, getenv func(string) string) {
	m := &cfg.Model
	switch {
	case m.Wire() == ProviderAnthropic:
		fromEnv := false
		if v := getenv("ANTHROPIC_BASE_URL"); v != "" {
			m.BaseURL, fromEnv = v, true
		}
		if v := getenv("ANTHROPIC_API_KEY"); v != "" && m.APIKeyEnv == "" && (fromEnv || anthropicOwn(m.BaseURL)) {
			m.APIKey = v
		}
	case m.IsOllama():
		if v := getenv("OPENAI_BASE_URL"); v != "" {
			m.BaseURL = v
		}
	default:
		if v := getenv("OPENAI_API_KEY"); v != "" {
			m.APIKey = v
		}
		if v := getenv("OPENAI_BASE_URL"); v != "" {
			m.BaseURL = v
		}
	}
	for i := range cfg.FallbackProviders {
		f := &cfg.FallbackProviders[i]
		if f.APIKey == "" && len(f.APIKeys) == 0 && f.Wire() == ProviderAnthropic && anthropicOwn(f.BaseURL) {
			f.APIKey = getenv("ANTHROPIC_API_KEY")
		}
	}
}

// anthropicOwn reports whether a base URL is Anthropic's API (or unset:
// the provider's own). Pure.
func anthropicOwn(baseURL string) bool {
	if strings.TrimSpace(baseURL) == "" {
		return true
	}
	u, err := url.Parse(strings.TrimSpace(baseURL))
	return err == nil && strings.EqualFold(u.Hostname(), "api.anthropic.com")
}
