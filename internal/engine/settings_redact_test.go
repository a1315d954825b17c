package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
)

// TestPublishedSettingsCarryNoSecret: what serve publishes and every command
// shows of the model settings has the endpoints' credentials redacted.
func TestPublishedSettingsCarryNoSecret(t *testing.T) {
	t.Parallel()
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
