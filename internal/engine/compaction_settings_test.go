package engine

import (
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/modelinfo"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

func TestCompactionFor(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		tune func(*config.Config)
		want workflows.CompactionSettings
	}{
		{"defaults: half of the model's 128000 minus the default reply cap, the worker's window asked", func(*config.Config) {},
			workflows.CompactionSettings{Threshold: (128000 - 4096) / 2, Ratio: 0.5, OverflowAttempts: 3, Cooldown: 10 * time.Minute}},
		{"the configured reply cap is left out", func(c *config.Config) { c.Model.MaxTokens = 8000 },
			workflows.CompactionSettings{Threshold: (128000 - 8000) / 2, Ratio: 0.5, OverflowAttempts: 3, Cooldown: 10 * time.Minute}},
		{"the bundled window of the model", func(c *config.Config) { c.Model.Name = "claude-sonnet-4-20250514" },
			workflows.CompactionSettings{Threshold: (200000 - 4096) / 2, Ratio: 0.5, OverflowAttempts: 3, Cooldown: 10 * time.Minute}},
		{"the configured window of the model", func(c *config.Config) {
			c.Model.Name, c.Models = "local", map[string]modelinfo.Info{"local": {ContextWindow: 32768}}
		}, workflows.CompactionSettings{Threshold: (32768 - 4096) / 2, Ratio: 0.5, OverflowAttempts: 3, Cooldown: 10 * time.Minute}},
		{"a model nothing is known of: 128000", func(c *config.Config) { c.Model.Name = "mystery" },
			workflows.CompactionSettings{Threshold: (128000 - 4096) / 2, Ratio: 0.5, OverflowAttempts: 3, Cooldown: 10 * time.Minute}},
		{"window and share: the sender's", func(c *config.Config) {
			c.Compression.ContextWindow, c.Compression.Threshold, c.Model.MaxTokens = 32000, 0.75, 2000
		}, workflows.CompactionSettings{Threshold: 22500, OverflowAttempts: 3, Cooldown: 10 * time.Minute}},
		{"disabled: only overflows compact", func(c *config.Config) { c.Compression.Enabled = false },
			workflows.CompactionSettings{OverflowAttempts: 3, Cooldown: 10 * time.Minute}},
		{"no overflow attempts", func(c *config.Config) { c.Compression.OverflowAttempts, c.Compression.SummaryCooldown = 0, time.Minute },
			workflows.CompactionSettings{Threshold: (128000 - 4096) / 2, Ratio: 0.5, Cooldown: time.Minute}},
	} {
		cfg := config.Default(t.TempDir())
		tt.tune(&cfg)
		if got := CompactionFor(cfg); got != tt.want {
			t.Errorf("%s: CompactionFor = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestCronTurnsUseTheTurnTemplate: a cron slot's turn has the same
// configuration as a chat turn, with the job's own model, budget and tools;
// a job without a model, and every job's model-call attempts, are the
// worker's when the turn runs (the input leaves them unset).
func TestCronTurnsUseTheTurnTemplate(t *testing.T) {
	t.Parallel()
	cfg := config.Default(t.TempDir())
	cfg.Model.Attempts, cfg.Model.MaxTokens = 2, 1000
	rt := &Runtime{Config: cfg}
	in := rt.Cron().Input(models.CronJob{ID: "j", Model: "job-model", MaxIterations: 7, Toolsets: []string{"todo"}}, time.Now()).Turn
	if in.ModelAttempts != 0 || in.Limits.BaseMaxTokens != 1000 || in.Compaction != CompactionFor(cfg) ||
		in.Model != "job-model" || in.MaxIterations != 7 || len(in.Tools) != 1 {
		t.Fatalf("cron turn = %+v", in)
	}
	in = rt.Cron().Input(models.CronJob{ID: "j"}, time.Now()).Turn
	if in.Model != "" || in.MaxIterations != cfg.MaxIterations {
		t.Fatalf("cron turn without its own model or budget = %+v", in)
	}
}
