package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
)

// TestApplyModelChange: model set writes the model keys, keeps every other
// key and the comments, and removes top-level keys that would override
// what it wrote; the result loads strictly.
func TestApplyModelChange(t *testing.T) {
	for _, tt := range []struct {
		name, file string
		change     modelChange
		want       []string // substrings of the output
		gone       []string // substrings that must not remain
		notes      int
		wantErr    string
		load       func(config.Config) bool
	}{
		{name: "empty file", change: modelChange{BaseURL: "http://h:1/v1", Name: "m"},
			want: []string{"model:\n  base_url: http://h:1/v1\n  name: m\n"},
			load: func(c config.Config) bool { return c.Model.BaseURL == "http://h:1/v1" && c.Model.Name == "m" }},
		{name: "another provider drops the old endpoint", file: "model:\n  base_url: https://api.openai.com/v1\n  name: gpt-4o\n",
			change: modelChange{Provider: "anthropic", Name: "claude-sonnet-4-5"}, notes: 1,
			want: []string{"provider: anthropic", "name: claude-sonnet-4-5"}, gone: []string{"base_url"},
			load: func(c config.Config) bool { return c.Model.Endpoint() == config.AnthropicEndpoint }},
		{name: "the same provider keeps it", file: "model:\n  provider: anthropic\n  base_url: https://proxy.example\n",
			change: modelChange{Provider: "anthropic", Name: "claude-sonnet-4-5"}, want: []string{"base_url: https://proxy.example"}},
		{name: "provider", change: modelChange{Provider: "anthropic", Name: "claude-sonnet-4-5"},
			want: []string{"model:\n  provider: anthropic\n  name: claude-sonnet-4-5\n"},
			load: func(c config.Config) bool { return c.Model.Wire() == config.ProviderAnthropic }},
		{name: "only comments", file: "# my settings\n", change: modelChange{Name: "m"},
			want: []string{"# my settings", "name: m"}},
		{name: "keeps other keys and comments",
			file:   "# top\nmax_iterations: 7 # seven\nmodel:\n  name: old # the old one\n  timeout: 90s\nbusy_input_mode: queue\n",
			change: modelChange{Name: "new", BaseURL: "https://api.example.com/v1"},
			want:   []string{"# top", "max_iterations: 7 # seven", "name: new # the old one", "timeout: 90s", "busy_input_mode: queue", "base_url: https://api.example.com/v1"},
			gone:   []string{"name: old"},
			load: func(c config.Config) bool {
				return c.MaxIterations == 7 && c.Model.Name == "new" && c.BusyInputMode == "queue" && c.Model.Timeout.Seconds() == 90
			}},
		{name: "key variable replaces a key in the file", file: "model:\n  api_key: sk-old\n",
			change: modelChange{APIKeyEnv: "MY_KEY"}, want: []string{"api_key_env: MY_KEY"}, gone: []string{"sk-old"}, notes: 1,
			load: func(c config.Config) bool { return c.Model.APIKeyEnv == "MY_KEY" && c.Model.APIKey == "" }},
		{name: "top-level overrides removed", file: "OPENAI_BASE_URL: http://old/v1\nTALARIA_MODEL: old\n",
			change: modelChange{BaseURL: "http://new/v1", Name: "new"}, gone: []string{"OPENAI_BASE_URL", "TALARIA_MODEL", "old"}, notes: 2,
			load: func(c config.Config) bool { return c.Model.BaseURL == "http://new/v1" && c.Model.Name == "new" }},
		{name: "null model section", file: "model:\n", change: modelChange{Name: "m"}, want: []string{"model:\n  name: m"}},
		{name: "broken YAML", file: "model: [\n", change: modelChange{Name: "m"}, wantErr: "not valid YAML"},
		{name: "not a mapping", file: "- a\n", change: modelChange{Name: "m"}, wantErr: "mapping"},
		{name: "model is a value", file: "model: gpt\n", change: modelChange{Name: "m"}, wantErr: "model:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, notes, err := applyModelChange([]byte(tt.file), tt.change)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, g := range tt.gone {
				if strings.Contains(string(out), g) {
					t.Errorf("output still has %q:\n%s", g, out)
				}
			}
			if len(notes) != tt.notes {
				t.Errorf("notes %q", notes)
			}
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, config.FileName), out, 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := config.Load(home, func(string) string { return "" })
			if err != nil {
				t.Fatalf("written file does not load: %v\n%s", err, out)
			}
			if tt.load != nil && !tt.load(c) {
				t.Fatalf("loaded %+v from\n%s", c.Model, out)
			}
		})
	}
}

// TestCheckChange: model set refuses what cannot work, in one line.
func TestCheckChange(t *testing.T) {
	for _, tt := range []struct {
		c    modelChange
		want string
	}{
		{modelChange{}, "nothing to set"},
		{modelChange{BaseURL: "localhost:11434"}, "not an http(s) URL"},
		{modelChange{BaseURL: "ftp://h/v1"}, "not an http(s) URL"},
		{modelChange{BaseURL: "http:///v1"}, "not an http(s) URL"},
		{modelChange{Name: " m"}, "spaces"},
		{modelChange{BaseURL: "http://user:sk-secret@h/v1"}, "must not hold a user or password"},
		{modelChange{BaseURL: "http://sk-secret@h/v1"}, "must not hold a user or password"},
		{modelChange{BaseURL: "http://h/v1?api-version=1"}, ""},
		{modelChange{APIKeyEnv: "MY-KEY"}, "not a variable name"},
		{modelChange{APIKeyEnv: "K", APIKey: "k"}, "exclude"},
		{modelChange{Provider: "claude"}, "--provider \"claude\" is not one of openai, anthropic, responses, ollama"},
		{modelChange{Provider: "anthropic", Name: "claude-sonnet-4-5"}, ""},
		{modelChange{BaseURL: "http://localhost:11434/v1", Name: "llama3.1", APIKeyEnv: "OPENAI_API_KEY"}, ""},
	} {
		err := checkChange(tt.c)
		if (tt.want == "") != (err == nil) || (err != nil && (!strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "sk-secret"))) {
			t.Errorf("checkChange(%+v) = %v, want %q", tt.c, err, tt.want)
		}
	}
}

// TestShellOverrides: model set notes the shell variables that override
// what it wrote, for commands run in this shell without serve.
func TestShellOverrides(t *testing.T) {
	s := engine.ModelSettings{Configured: true, BaseURL: "http://a/v1", Model: "m"}
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{nil, ""},
		{map[string]string{"OPENAI_BASE_URL": "http://a/v1/", "TALARIA_MODEL": "m"}, ""},
		{map[string]string{"OPENAI_BASE_URL": "http://b/v1"}, "OPENAI_BASE_URL in this shell overrides config.yaml"},
		{map[string]string{"OPENAI_BASE_URL": "http://b/v1", "TALARIA_MODEL": "x"}, "OPENAI_BASE_URL and TALARIA_MODEL in this shell override config.yaml"},
	} {
		got := shellOverrides(func(k string) string { return tt.env[k] }, s)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("shellOverrides(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
	if withoutModelEnv(func(k string) string { return k })("OPENAI_BASE_URL") != "" ||
		withoutModelEnv(func(k string) string { return k })("TALARIA_DB") != "TALARIA_DB" {
		t.Fatal("withoutModelEnv")
	}
}
