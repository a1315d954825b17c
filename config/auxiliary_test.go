package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAuxiliaryProblems(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		aux  Auxiliary
		want string // a problem containing this; "" for none
	}{
		{"none", Auxiliary{}, ""},
		{"a model alone uses the OpenAI API", Auxiliary{Model: "gpt-4o-mini"}, ""},
		{"a local server", Auxiliary{Model: "qwen", BaseURL: "http://127.0.0.1:8080/v1"}, ""},
		{"anthropic with a key variable", Auxiliary{Model: "claude-haiku", APIKeyEnv: "AUX_KEY", ProviderOptions: ProviderOptions{Provider: "anthropic"}}, ""},
		{"settings without a model", Auxiliary{BaseURL: "http://127.0.0.1:8080/v1"}, "auxiliary.model"},
		{"not a URL", Auxiliary{Model: "m", BaseURL: "ftp://x"}, "auxiliary.base_url"},
		{"not a variable", Auxiliary{Model: "m", APIKeyEnv: "KEY=sk-1"}, "auxiliary.api_key_env"},
		{"unknown wire", Auxiliary{Model: "m", ProviderOptions: ProviderOptions{Provider: "grpc"}}, "auxiliary provider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			got := tt.aux.problems()
			if tt.want == "" && len(got) > 0 {
				t.Fatalf("problems = %v, want none", got)
			}
			if tt.want != "" && !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, tt.want) }) {
				t.Fatalf("problems = %v, want one naming %q", got, tt.want)
			}
		})
	}
}

func TestAuxiliaryLoads(t *testing.T) {
	t.Parallel()

	home := t.TempDir()
	text := "auxiliary:\n  base_url: http://127.0.0.1:9/v1/\n  api_key_env: AUX_KEY\n  model: small\n"
	if err := os.WriteFile(filepath.Join(home, FileName), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(home, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Auxiliary.Configured() || c.Auxiliary.Endpoint() != "http://127.0.0.1:9/v1" || c.Auxiliary.Wire() != ProviderOpenAI {
		t.Fatalf("auxiliary = %+v (endpoint %q)", c.Auxiliary, c.Auxiliary.Endpoint())
	}
	if !slices.Contains(c.PasswordEnvs(), "AUX_KEY") {
		t.Fatalf("PasswordEnvs() = %v, want AUX_KEY (never passed to tools)", c.PasswordEnvs())
	}
}
