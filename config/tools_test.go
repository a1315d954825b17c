package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestToolSettingsLoad(t *testing.T) {
	t.Parallel()

	home := t.TempDir()
	writeConfigFile(t, home, "terminal:\n  env_passthrough: [GOPATH, GITHUB_TOKEN]\ntools:\n  write_roots: [/srv/out, ~/scratch]\n  read_roots: [/srv]\n")
	c, err := Load(home, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Terminal.EnvPassthrough, []string{"GOPATH", "GITHUB_TOKEN"}) ||
		!slices.Equal(c.Tools.WriteRoots, []string{"/srv/out", "~/scratch"}) || !slices.Equal(c.Tools.ReadRoots, []string{"/srv"}) {
		t.Fatalf("%+v %+v", c.Terminal, c.Tools)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestToolSettingsValidate(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name     string
		terminal Terminal
		tools    Tools
		problem  string
	}{
		{"defaults", Terminal{}, Tools{}, ""},
		{"good names", Terminal{EnvPassthrough: []string{"GOPATH", "_X1"}}, Tools{}, ""},
		{"bad name", Terminal{EnvPassthrough: []string{"BAD-NAME"}}, Tools{}, `"BAD-NAME" is not an environment variable name`},
		{"name with =", Terminal{EnvPassthrough: []string{"A=B"}}, Tools{}, "not an environment variable name"},
		{"relative write root", Terminal{}, Tools{WriteRoots: []string{"out"}}, `tools.write_roots: "out" must be an absolute path`},
		{"relative read root", Terminal{}, Tools{ReadRoots: []string{"./src"}}, "tools.read_roots"},
		{"home roots", Terminal{}, Tools{WriteRoots: []string{"~/x", "~"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			c := Default(t.TempDir())
			c.Terminal, c.Tools = tt.terminal, tt.tools
			err := c.Validate()
			if tt.problem == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.problem) {
				t.Fatalf("Validate() = %v, want %q", err, tt.problem)
			}
		})
	}
}

func TestSecrets(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name  string
		edit  func(*Config)
		want  []string
		files []string
	}{
		{"defaults hold no secret", func(*Config) {}, nil, []string{"talaria.db", "talaria.db-wal"}},
		{"keys and postgres", func(c *Config) {
			c.Model.APIKey = "sk-1"
			c.FallbackProviders = []Provider{{BaseURL: "http://f", APIKey: "sk-2"}, {BaseURL: "http://g"}}
			c.DB = "postgres://u:p@h/db"
			c.Temporal.APIKey = "tk"
		}, []string{"sk-1", "sk-2", "postgres://u:p@h/db", "tk"}, nil},
		{"key pools and the auxiliary model's", func(c *Config) {
			c.Model.APIKey, c.Model.APIKeys = "sk-a,sk-b", []string{"sk-c"}
			c.FallbackProviders = []Provider{{BaseURL: "http://f", ProviderOptions: ProviderOptions{APIKeys: []string{"sk-d"}}}}
			c.Auxiliary = Auxiliary{Model: "small", ProviderOptions: ProviderOptions{APIKeys: []string{"sk-e"}}}
		}, []string{"sk-a", "sk-b", "sk-c", "sk-d", "sk-e"}, nil},
		{"temporal tls", func(c *Config) {
			c.Temporal.TLSKey, c.Temporal.TLSCert, c.Temporal.TLSCA = "/t/k.pem", "/t/c.pem", "/t/ca.pem"
		}, []string{"/t/k.pem", "/t/c.pem", "/t/ca.pem"}, []string{"/t/k.pem", "/t/c.pem", "/t/ca.pem"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			c := Default("/h")
			tt.edit(&c)
			got := c.Secrets()
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("Secrets() = %v, missing %q", got, w)
				}
			}
			if tt.want == nil && len(got) != 0 {
				t.Errorf("Secrets() = %v, want none", got)
			}
			files := strings.Join(c.SecretFiles(), " ")
			for _, f := range tt.files {
				if !strings.Contains(files, f) {
					t.Errorf("SecretFiles() = %s, missing %q", files, f)
				}
			}
		})
	}
}

func writeConfigFile(t *testing.T, home, yaml string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(home, FileName), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
}
