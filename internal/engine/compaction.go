package engine

import (
	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/compress"
	"github.com/talaria-agent/talaria/internal/modelinfo"
	"github.com/talaria-agent/talaria/workflows"
)

// CompactionFor turns the configuration into a turn's compaction settings:
// the preflight threshold in tokens is compression.threshold of the context
// window left after the reply's cap. With compression.context_window set,
// that is the window; without, the window is the model's: the worker that
// runs the turn gives it (Ratio asks it to), and the threshold set here,
// from what the configuration and the bundled table know of the
// configured model (else compress.DefaultContextWindow), holds when the
// worker knows none.
func CompactionFor(cfg config.Config) workflows.CompactionSettings {
	c := cfg.Compression
	s := workflows.CompactionSettings{OverflowAttempts: c.OverflowAttempts, Cooldown: c.SummaryCooldown}
	if !c.Enabled {
		return s
	}
	window := c.ContextWindow
	if window <= 0 {
		window = modelinfo.NewCatalog(cfg.ModelOverrides(), nil).Info(cfg.Model.Name).ContextWindow
		s.Ratio = c.Threshold
		if !(s.Ratio > 0) {
			s.Ratio = compress.DefaultRatio
		}
	}
	s.Threshold = compress.Threshold(window, cfg.Model.MaxTokens, c.Threshold)
	return s
}
