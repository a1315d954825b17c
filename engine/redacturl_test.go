package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
)

// TestRedactURL: credentials in an endpoint URL are never shown.
func TestRedactURL(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"http://localhost:11434/v1", "http://localhost:11434/v1"},
		{"https://user:sk-secret@host/v1", "https://xxxxx@host/v1"},
		{"https://sk-secret@host/v1", "https://xxxxx@host/v1"},
		{"https://host/v1?api-key=sk-secret", "https://host/v1?api-key=xxxxx"},
		{"https://host/v1?api-version=2024&key=sk-secret", "https://host/v1?api-version=xxxxx&key=xxxxx"},
		{"https://host/v1?sk-secret", "https://host/v1?xxxxx"},
		{"https://host/v1#sk-secret", "https://host/v1"},
		{"http://[::1]:bad/sk-secret\x7f", "(a URL that does not parse)"},
	} {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// What serve publishes and every command shows carries no secret.
	cfg := config.Default("/h")
	cfg.Model.BaseURL = "http://u:sk-one@a/v1?key=sk-two"
	cfg.FallbackProviders = []config.Provider{{BaseURL: "http://u:sk-three@b/v1"}}
	s := SettingsOf(cfg)
	published, err := json.Marshal(ServeInfo{}.WithModel(s, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	for _, shown := range []string{s.BaseURL, s.Summary(), s.Fallbacks[0].BaseURL, string(published)} {
		if strings.Contains(shown, "sk-") {
			t.Errorf("a secret is shown: %q", shown)
		}
	}
}
