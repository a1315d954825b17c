package engine

import (
	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/compress"
	"github.com/talaria-agent/talaria/workflows"
)

// CompactionFor turns the configuration into a turn's compaction settings:
// the preflight threshold in tokens is compression.threshold of the context
// window left after the reply's cap.
func CompactionFor(cfg config.Config) workflows.CompactionSettings {
	c := cfg.Compression
	s := workflows.CompactionSettings{OverflowAttempts: c.OverflowAttempts, Cooldown: c.SummaryCooldown}
	if c.Enabled {
		s.Threshold = compress.Threshold(c.ContextWindow, cfg.Model.MaxTokens, c.Threshold)
	}
	return s
}
