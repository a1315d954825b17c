package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/models"
)

// Status is what `talaria memory status -o json` and GET
// /api/memory/status tell: the provider (none when memory.recall is off),
// what the store holds for recall, and the settings that bound it.
type Status struct {
	Recall     bool   `json:"recall"`
	Provider   string `json:"provider"`
	Summaries  int64  `json:"summaries"`
	Vectors    int64  `json:"vectors"`
	Embeddings string `json:"embeddings,omitempty"`
	// Expansion is the auxiliary model recall's questions come from (""
	// when there is none, or the provider does not search with them).
	Expansion string `json:"expansion,omitempty"`
	BudgetMS  int64  `json:"prefetch_budget_ms"`
	IdleS     int64  `json:"summary_idle_s"`
	MaxBytes  int    `json:"max_bytes"`
}

// StatusOf is the status of recall under cfg over store.
func StatusOf(ctx context.Context, cfg config.Config, store *models.Store) (Status, error) {
	m := cfg.Memory
	n, v, err := store.SummaryCounts(ctx)
	if err != nil {
		return Status{}, fmt.Errorf("memory status: %w", err)
	}
	return Status{Recall: m.Recall, Provider: m.ProviderName(), Summaries: n, Vectors: v, Embeddings: m.Embeddings.BaseURL,
		Expansion: expansionModel(cfg),
		BudgetMS:  m.Budget().Milliseconds(), IdleS: int64(m.Idle() / time.Second), MaxBytes: m.Bytes()}, nil
}

// SummaryView is a session's stored summary as `talaria memory recall -o
// json` and GET /api/memory/recall/{session} show it.
type SummaryView struct {
	Session string    `json:"session"`
	Summary string    `json:"summary"`
	Model   string    `json:"model"`
	At      time.Time `json:"at"`
	Turns   int       `json:"turns"`
	// Vector says whether the summary has an embedding.
	Vector bool `json:"vector"`
}

// NewSummaryView is the view of sum. Pure.
func NewSummaryView(sum *models.SessionSummary) SummaryView {
	return SummaryView{Session: sum.SessionID, Summary: sum.Summary, Model: sum.Model, At: sum.UpdatedAt, Turns: sum.Turns,
		Vector: len(sum.Embedding) > 0}
}

// expansionModel is the model recall's questions come from: the auxiliary
// model's, when one is configured and the built-in recall is on ("" else).
// Pure.
func expansionModel(cfg config.Config) string {
	if cfg.Memory.ProviderName() != config.MemoryRecall || !cfg.Auxiliary.Configured() {
		return ""
	}
	return cfg.Auxiliary.Model
}
