package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAPIKeyEnv: model.api_key_env names the variable the key is read from;
// a key in the file or OPENAI_API_KEY wins over it.
func TestAPIKeyEnv(t *testing.T) {
	t.Parallel()

	for _, tt := range []struct {
		name, file string
		env        map[string]string
		want       string
	}{
		{"from the named variable", "model:\n  api_key_env: MY_KEY\n", map[string]string{"MY_KEY": "k1"}, "k1"},
		{"variable unset", "model:\n  api_key_env: MY_KEY\n", nil, ""},
		{"OPENAI_API_KEY wins", "model:\n  api_key_env: MY_KEY\n", map[string]string{"MY_KEY": "k1", "OPENAI_API_KEY": "k2"}, "k2"},
		{"file key wins", "model:\n  api_key: k3\n  api_key_env: MY_KEY\n", map[string]string{"MY_KEY": "k1"}, "k3"},
		{"no variable named", "model:\n  name: m\n", map[string]string{"MY_KEY": "k1"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, FileName), []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := Load(home, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if c.Model.APIKey != tt.want {
				t.Fatalf("api key %q, want %q", c.Model.APIKey, tt.want)
			}
		})
	}
}
