package engine

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
)

// TestConfigChanges: model settings are applied live, other keys need a
// restart, and values (secrets) are never listed.
func TestConfigChanges(t *testing.T) {
	t.Parallel()
	base := config.Default("/h")
	base.Model.BaseURL, base.Model.Name, base.Model.APIKey = "http://a/v1", "m1", "secret-1"
	for _, tt := range []struct {
		name          string
		change        func(*config.Config)
		live, restart []string
	}{
		{"nothing", func(*config.Config) {}, nil, nil},
		{"model name", func(c *config.Config) { c.Model.Name = "m2" }, []string{"model.name"}, nil},
		{"endpoint and key", func(c *config.Config) { c.Model.BaseURL, c.Model.APIKey = "http://b/v1", "secret-2" },
			[]string{"model.api_key", "model.base_url"}, nil},
		{"attempts", func(c *config.Config) { c.Model.Attempts = 3 }, []string{"model.attempts"}, nil},
		{"fallbacks", func(c *config.Config) { c.FallbackProviders = []config.Provider{{BaseURL: "http://c/v1"}} },
			[]string{"fallback_providers"}, nil},
		{"db and temporal", func(c *config.Config) { c.DB, c.Temporal.Address = "/other.db", "h:1" },
			nil, []string{"db", "temporal.address"}},
		{"both", func(c *config.Config) { c.Model.Name, c.MaxIterations = "m3", 5 },
			[]string{"model.name"}, []string{"max_iterations"}},
		{"client-only keys", func(c *config.Config) { c.Approvals.NonInteractive, c.BusyInputMode = "wait", "queue" }, nil, nil},
		{"client-only and serve keys", func(c *config.Config) { c.Approvals.NonInteractive, c.Approvals.Mode = "wait", "deny" },
			nil, []string{"approvals.mode"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			next := base
			next.FallbackProviders = slices.Clone(base.FallbackProviders)
			tt.change(&next)
			live, restart, err := ConfigChanges(base, next)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(live, tt.live) || !slices.Equal(restart, tt.restart) {
				t.Fatalf("live %q restart %q, want %q %q", live, restart, tt.live, tt.restart)
			}
			for _, k := range append(live, restart...) {
				if strings.Contains(k, "secret") {
					t.Fatalf("a value leaked into %q", k)
				}
			}
		})
	}
}

// TestModelConfig: providers and the worker's model follow Set; the shown
// settings never carry the key.
func TestModelConfig(t *testing.T) {
	t.Parallel()
	cfg := config.Default("/h")
	m := NewModelConfig(cfg)
	if _, err := m.Providers(""); err == nil || !strings.Contains(err.Error(), "model set") {
		t.Fatalf("unconfigured: %v", err)
	}
	if s := m.Settings(); s.Configured || s.Summary() != "no model endpoint configured" {
		t.Fatalf("unconfigured settings %+v", s)
	}
	cfg.Model.BaseURL, cfg.Model.Name, cfg.Model.APIKey, cfg.Model.Attempts = "http://a/v1/", "m1", "sk-secret", 2
	cfg.FallbackProviders = []config.Provider{{BaseURL: "http://b/v1", APIKey: "k2"}, {BaseURL: "http://c/v1", Model: "c1"}}
	m.Set(cfg)
	list, err := m.Providers("")
	if err != nil || len(list) != 3 || list[0].BaseURL != "http://a/v1" || list[0].Model != "m1" ||
		list[1].Model != "m1" || list[2].Model != "c1" || list[0].APIKey != "sk-secret" {
		t.Fatalf("providers %+v, %v", list, err)
	}
	if list, _ := m.Providers("override"); list[0].Model != "override" || list[1].Model != "override" || list[2].Model != "c1" {
		t.Fatalf("override %+v", list)
	}
	if w := m.Worker(); w.Name != "m1" || w.Attempts != 2 || w.Timeout != 5*time.Minute || !w.Stream {
		t.Fatalf("worker %+v", w)
	}
	s := m.Settings()
	if !s.APIKeySet || s.Summary() != "model m1 at http://a/v1" || len(s.Fallbacks) != 2 || !s.Fallbacks[0].APIKeySet {
		t.Fatalf("settings %+v", s)
	}
	info := ServeInfo{}.WithModel(s, time.Now())
	if !info.ModelConfigured || info.Model != "m1" || info.ModelEndpoint != "http://a/v1" || info.ModelSettings.Attempts != 2 {
		t.Fatalf("serve info %+v", info)
	}
}

// TestSettingsOfDefaults: unset limits are shown as the values a turn
// uses, not empty.
func TestSettingsOfDefaults(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name                string
		model               config.Model
		timeout, retryAfter string
		attempts            int
	}{
		{"unset", config.Model{Name: "m"}, "5m0s", "5m0s", 6},
		{"set", config.Model{Name: "m", Timeout: 90 * time.Second, MaxRetryAfter: time.Minute, Attempts: 2}, "1m30s", "1m0s", 2},
	} {
		s := SettingsOf(config.Config{Model: tt.model})
		if s.Timeout != tt.timeout || s.MaxRetryAfter != tt.retryAfter || s.Attempts != tt.attempts {
			t.Errorf("%s: %+v", tt.name, s)
		}
	}
}
