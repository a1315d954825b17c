package talaria

import (
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/memory"
)

// Recall across sessions (memory.recall).
type (
	MemoryRecall = memory.Recall
	MemoryItem   = memory.Item
	MemoryQuery  = memory.Query
	MemoryStatus = memory.Status
)

var (
	// NewMemoryProvider is the provider the configuration turns on (nil
	// when memory.recall is off).
	NewMemoryProvider = engine.MemoryProvider
	// RenderRecall is the block a model call carries for a recall.
	RenderRecall = memory.RenderBlock
	ErrRecallOff = engine.ErrRecallOff
	// MemoryStatusOf is what `talaria memory status` tells.
	MemoryStatusOf = memory.StatusOf
	// NewMemorySummaryView is a session's summary as `talaria memory
	// recall -o json` shows it.
	NewMemorySummaryView = memory.NewSummaryView
)
