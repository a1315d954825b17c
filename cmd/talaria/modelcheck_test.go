package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
)

// TestCheckedConfig: model set checks the document it would write in
// memory: a key in it is written nowhere else (no temporary directory is
// needed: TMPDIR names none here), and a problem names
// $TALARIA_HOME/config.yaml and the line.
func TestCheckedConfig(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	home := t.TempDir()
	for _, tt := range []struct {
		name, doc string
		err       string
	}{
		{"a key", "model:\n  base_url: http://a/v1\n  name: m\n  api_key: sk-secret\n", ""},
		{"unknown key", "model:\n  base_url: http://a/v1\n  nmae: m\n", filepath.Join(home, "config.yaml") + ":3:"},
		{"invalid value", "model:\n  base_url: http://a/v1\n  name: m\nmax_iterations: 0\n", "max_iterations"},
	} {
		cfg, err := checkedConfig(home, []byte(tt.doc))
		if tt.err == "" {
			if err != nil || cfg.Model.APIKey != "sk-secret" {
				t.Errorf("%s: %+v, %v", tt.name, cfg.Model, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.err)
		}
	}
	if left, _ := os.ReadDir(home); len(left) > 0 {
		t.Fatalf("checking wrote %s to the home", left[0].Name())
	}
}

// TestPickupLine: model set reports serve's pickup only once serve has
// read config.yaml after it was written: a serve showing the same model
// and endpoint from before (a change of the key alone) has not.
func TestPickupLine(t *testing.T) {
	written := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	want := engine.ModelSettings{Configured: true, BaseURL: "http://a/v1", Model: "m", APIKeySet: true}
	served := func(s engine.ModelSettings, at time.Time) engine.ServeInfo {
		return engine.ServeInfo{PID: 7}.WithModel(s, at)
	}
	other := engine.ModelSettings{Configured: true, BaseURL: "http://env/v1", Model: "m"}
	for _, tt := range []struct {
		name string
		info engine.ServeInfo
		done bool
		want string
	}{
		{"same settings, read before the write", served(want, written.Add(-time.Second)), false, ""},
		{"read at the write", served(want, written), false, ""},
		{"read after", served(want, written.Add(200*time.Millisecond)), true, "talaria serve (pid 7) uses it for new model calls"},
		{"read after, environment wins", served(other, written.Add(time.Second)), true, "uses model m at http://env/v1 (its environment overrides"},
		{"an old serve without settings", engine.ServeInfo{PID: 7, Model: "m"}, false, ""},
	} {
		line, done := pickupLine(tt.info, want, written)
		if done != tt.done || !strings.Contains(line, tt.want) {
			t.Errorf("%s: %q, %t", tt.name, line, done)
		}
	}
}

// TestWarningsHideURLCredentials: a shell's endpoint with credentials is
// shown without them, and the same endpoint as serve's (whose published
// URL is redacted) is not taken for another one.
func TestWarningsHideURLCredentials(t *testing.T) {
	cfg := config.Default("/h")
	cfg.Model.BaseURL, cfg.Model.Name = "http://u:sk-serve@serve:1/v1", "big"
	info := engine.ServeInfo{PID: 3}.WithModel(engine.SettingsOf(cfg), time.Now())
	for _, tt := range []struct {
		url, want string
	}{
		{"http://u:sk-serve@serve:1/v1/", ""},
		{"http://u:sk-mine@mine:2/v1?key=sk-mine", "OPENAI_BASE_URL=http://xxxxx@mine:2/v1?key=xxxxx in this shell is not used"},
	} {
		getenv := func(k string) string {
			if k == "OPENAI_BASE_URL" {
				return tt.url
			}
			return ""
		}
		got := serveModelWarning(info, getenv)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) || strings.Contains(got, "sk-") {
			t.Errorf("serveModelWarning(%s) = %q, want %q", tt.url, got, tt.want)
		}
		if line := shellOverrides(getenv, engine.ServeSettings(info)); strings.Contains(line, "sk-") || (tt.want == "") != (line == "") {
			t.Errorf("shellOverrides(%s) = %q", tt.url, line)
		}
	}
}

// TestSavedLine: model set says in plain words what it wrote and whether
// the file names an endpoint.
func TestSavedLine(t *testing.T) {
	const path = "/h/config.yaml"
	for _, tt := range []struct {
		name   string
		change modelChange
		file   config.Model
		want   string
	}{
		{"endpoint and model", modelChange{BaseURL: "http://h/v1", Name: "m"}, config.Model{BaseURL: "http://h/v1", Name: "m"},
			"saved base_url http://h/v1 and model m to /h/config.yaml; turns use model m at http://h/v1"},
		{"key variable only, no endpoint", modelChange{APIKeyEnv: "OPENAI_API_KEY"}, config.Model{APIKeyEnv: "OPENAI_API_KEY", Name: "gpt-4o-mini"},
			"saved api_key_env OPENAI_API_KEY to /h/config.yaml; no base_url is set, so turns use model gpt-4o-mini at https://api.openai.com/v1 (the provider's own) when OPENAI_API_KEY is set where they run"},
		{"key only", modelChange{APIKey: "sk-secret"}, config.Model{APIKey: "sk-secret", Name: "m"},
			"saved the API key to /h/config.yaml; no base_url is set, so turns use model m at https://api.openai.com/v1 (the provider's own, as a key is set)"},
		{"anthropic with a key variable", modelChange{Provider: "anthropic", APIKeyEnv: "ANTHROPIC_API_KEY"},
			config.Model{ProviderOptions: config.ProviderOptions{Provider: "anthropic"}, APIKeyEnv: "ANTHROPIC_API_KEY", Name: "claude-sonnet-4-5"},
			"saved provider anthropic and api_key_env ANTHROPIC_API_KEY to /h/config.yaml; no base_url is set, so turns use model claude-sonnet-4-5 at https://api.anthropic.com (the provider's own) when ANTHROPIC_API_KEY is set"},
		{"ollama needs no key", modelChange{Provider: "ollama", Name: "qwen2.5"},
			config.Model{ProviderOptions: config.ProviderOptions{Provider: "ollama"}, Name: "qwen2.5"},
			"saved provider ollama and model qwen2.5 to /h/config.yaml; turns use model qwen2.5 at http://localhost:11434/v1"},
		{"model only, nothing configured", modelChange{Name: "m"}, config.Model{Name: "m"},
			"saved model m to /h/config.yaml; no model endpoint is configured yet: give --base-url URL"},
		{"three things", modelChange{BaseURL: "http://h/v1?k=sk-x", Name: "m", APIKeyEnv: "K"}, config.Model{BaseURL: "http://h/v1?k=sk-x", Name: "m", APIKeyEnv: "K"},
			"saved base_url http://h/v1?k=xxxxx, model m and api_key_env K to /h/config.yaml; turns use model m at http://h/v1?k=xxxxx"},
	} {
		got := savedLine(tt.change, tt.file, path)
		if !strings.HasPrefix(got, tt.want) || strings.Contains(got, "sk-") || strings.Contains(got, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
