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
	BudgetMS   int64  `json:"prefetch_budget_ms"`
	IdleS      int64  `json:"summary_idle_s"`
	MaxBytes   int    `json:"max_bytes"`
}

// StatusOf is the status of recall under m over store.
func StatusOf(ctx context.Context, m config.Memory, store *models.Store) (Status, error) {
	n, v, err := store.SummaryCounts(ctx)
	if err != nil {
		return Status{}, fmt.Errorf("memory status: %w", err)
	}
	return Status{Recall: m.Recall, Provider: m.ProviderName(), Summaries: n, Vectors: v, Embeddings: m.Embeddings.BaseURL,
		BudgetMS: m.Budget().Milliseconds(), IdleS: int64(m.Idle() / time.Second), MaxBytes: m.Bytes()}, nil
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
