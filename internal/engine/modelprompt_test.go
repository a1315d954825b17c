package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/config"
)

// TestPromptBuilderFollowsModelSettings: a new session's system prompt
// names the model and provider the worker holds when it is built, not
// those of its start; a turn's own model (-m) wins over the name.
func TestPromptBuilderFollowsModelSettings(t *testing.T) {
	t.Parallel()
	cfg := config.Default(t.TempDir())
	cfg.Model.BaseURL, cfg.Model.Name = "http://start-host:1/v1", "start-model"
	models := NewModelConfig(cfg)
	build := promptBuilder(cfg.Home, models, nil, nil)
	next := cfg
	next.Model.BaseURL, next.Model.Name = "http://user:pw@reloaded-host:2/v1", "reloaded-model"
	models.Set(next)
	for _, tt := range []struct {
		model     string
		want, not []string
	}{
		{"", []string{"reloaded-model", "reloaded-host:2"}, []string{"start-model", "start-host", "pw"}},
		{"turn-model", []string{"turn-model", "reloaded-host:2"}, []string{"start-model", "reloaded-model"}},
	} {
		text, err := build(context.Background(), tt.model, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("model %q: prompt lacks %q", tt.model, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(text, n) {
				t.Errorf("model %q: prompt holds %q", tt.model, n)
			}
		}
	}
}
