package config

import "testing"

// TestKeyEnvGoesWhereItBelongs: a provider's key variable reaches only
// the endpoints it is for.
func TestKeyEnvGoesWhereItBelongs(t *testing.T) {
	t.Parallel()

	env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant", "OPENAI_API_KEY": "sk-oai", "DEEPSEEK_KEY": "sk-ds"}
	for _, tt := range []struct {
		name, yaml string
		extra      map[string]string
		model      string   // the model's key
		fallbacks  []string // each fallback's key
	}{
		{"anthropic at its own endpoint", "model:\n  provider: anthropic\n", nil, "sk-ant", nil},
		{"anthropic, base URL from ANTHROPIC_BASE_URL", "model:\n  provider: anthropic\n",
			map[string]string{"ANTHROPIC_BASE_URL": "https://proxy.example/anthropic"}, "sk-ant", nil},
		{"anthropic-compatible third party in the file", "model:\n  provider: anthropic\n  base_url: https://api.deepseek.com/anthropic\n", nil, "", nil},
		{"anthropic with its own variable", "model:\n  provider: anthropic\n  api_key_env: DEEPSEEK_KEY\n", nil, "sk-ds", nil},
		{"ollama gets no key", "model:\n  provider: ollama\n  base_url: http://gpu:11434\n", nil, "", nil},
		{"openai as before", "model:\n  base_url: https://openrouter.ai/api/v1\n", nil, "sk-oai", nil},
		{"responses as before", "model:\n  provider: responses\n", nil, "sk-oai", nil},
		{"fallbacks", "fallback_providers:\n  - provider: anthropic\n  - provider: anthropic\n    base_url: https://api.z.ai/api/anthropic\n" +
			"  - provider: anthropic\n    api_key: own\n  - base_url: http://other/v1\n", nil, "sk-oai", []string{"sk-ant", "", "own", ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			get := func(k string) string {
				if v, ok := tt.extra[k]; ok {
					return v
				}
				return env[k]
			}
			cfg, err := LoadBytes(t.TempDir(), []byte(tt.yaml), get)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Model.APIKey != tt.model {
				t.Errorf("model key = %q, want %q", cfg.Model.APIKey, tt.model)
			}
			for i, want := range tt.fallbacks {
				if got := cfg.FallbackProviders[i].APIKey; got != want {
					t.Errorf("fallback %d key = %q, want %q", i, got, want)
				}
			}
		})
	}
}
