package main

import (
	"testing"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/engine"
)

// TestTurnTemplateCarriesCompaction: the turns chat and send start compact
// as the configuration says.
func TestTurnTemplateCarriesCompaction(t *testing.T) {
	cfg := config.Default(t.TempDir())
	cfg.Compression.ContextWindow = 20000
	in := engine.TurnTemplate(cfg, t.TempDir())
	if in.Compaction != engine.CompactionFor(cfg) || in.Compaction.Threshold == 0 || in.Compaction.OverflowAttempts != 3 {
		t.Fatalf("turn template compaction = %+v", in.Compaction)
	}
}
