package config

import "testing"

// TestProviderWire: each provider name's wire format, whether it is an
// Ollama server and its default endpoint.
func TestProviderWire(t *testing.T) {
	t.Parallel()

	tests := []struct {
		provider, wire string
		ollama         bool
		endpoint       string
	}{
		{"", ProviderOpenAI, false, OpenAIEndpoint},
		{"OpenAI", ProviderOpenAI, false, OpenAIEndpoint},
		{"anthropic", ProviderAnthropic, false, AnthropicEndpoint},
		{"responses", ProviderResponses, false, OpenAIEndpoint},
		{"ollama", ProviderOllama, true, OllamaEndpoint},
		{" Ollama ", ProviderOllama, true, OllamaEndpoint},
		{"vllm", ProviderOpenAI, false, OpenAIEndpoint},
	}
	for _, tt := range tests {
		o := ProviderOptions{Provider: tt.provider}
		if got := o.Wire(); got != tt.wire {
			t.Errorf("provider %q: Wire() = %q, want %q", tt.provider, got, tt.wire)
		}
		if got := o.IsOllama(); got != tt.ollama {
			t.Errorf("provider %q: IsOllama() = %v, want %v", tt.provider, got, tt.ollama)
		}
		if got := o.DefaultEndpoint(); got != tt.endpoint {
			t.Errorf("provider %q: DefaultEndpoint() = %q, want %q", tt.provider, got, tt.endpoint)
		}
	}
}
