package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Purposes of a model call.
const (
	PurposeTurn     = "turn"     // a call of a turn's loop
	PurposeCompress = "compress" // a compaction's summary
	PurposeJudge    = "judge"    // a goal's judgement
	PurposeSummary  = "summary"  // a session's summary, for recall
	// PurposeExpansion: the auxiliary model's questions like a turn's
	// message, for recall.
	PurposeExpansion = "expansion"
)

// ModelCall records one model call that answered: its tokens and what it
// cost at the model's price. Key is the call's idempotency key, so a
// retried activity records it once.
type ModelCall struct {
	ID        int64  `gorm:"primaryKey;autoIncrement"`
	Key       string `gorm:"uniqueIndex;size:512;serializer:text"`
	SessionID string `gorm:"index;size:128"`
	TurnID    string `gorm:"size:256"`
	Purpose   string `gorm:"size:32"`
	// Provider is the wire format; Endpoint the endpoint's host (never a
	// URL with credentials).
	Provider         string `gorm:"size:32"`
	Endpoint         string `gorm:"size:256;serializer:text"`
	Model            string `gorm:"size:256;serializer:text"`
	PromptTokens     int64
	CompletionTokens int64
	CacheReadTokens  int64
	CacheWriteTokens int64
	ReasoningTokens  int64
	CostUSD          float64
	// Priced says the model's price was known: a CostUSD of 0 is then
	// free, not unknown.
	Priced    bool
	CreatedAt time.Time `gorm:"index"`
}

// RecordModelCall stores c once per Key (a second record of the same key
// is ignored).
func (s *Store) RecordModelCall(ctx context.Context, c ModelCall) error {
	c = modelCallRow(c)
	if err := insertModelCall(s.db.WithContext(ctx), &c); err != nil {
		return fmt.Errorf("models: record model call %q: %w", c.Key, err)
	}
	return nil
}

// modelCallRow is c as RecordModelCall inserts it: without an ID, and
// created now unless c says when.
func modelCallRow(c ModelCall) ModelCall {
	if c.CreatedAt.IsZero() {
		c.CreatedAt = now()
	}
	c.ID = 0
	return c
}

// insertModelCall inserts c unless its Key is recorded.
func insertModelCall(db *gorm.DB, c *ModelCall) error {
	return db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "key"}}, DoNothing: true}).Create(c).Error
}

// UsageFilter selects model calls: of one session (empty: all), since a
// time (zero: ever).
type UsageFilter struct {
	SessionID string
	Since     time.Time
}

// UsageRow sums the model calls of one model and provider.
type UsageRow struct {
	Provider         string  `json:"provider"`
	Model            string  `json:"model"`
	Calls            int64   `json:"calls"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	// Unpriced counts calls whose model had no known price.
	Unpriced int64 `json:"unpriced_calls"`
}

// Usage sums the model calls f selects by provider and model, the most
// expensive first.
func (s *Store) Usage(ctx context.Context, f UsageFilter) ([]UsageRow, error) {
	q := s.db.WithContext(ctx).Model(&ModelCall{})
	if f.SessionID != "" {
		q = q.Where("session_id = ?", f.SessionID)
	}
	if !f.Since.IsZero() {
		q = q.Where("created_at >= ?", f.Since.UTC())
	}
	var rows []UsageRow
	err := q.Select("provider, model, COUNT(*) AS calls, SUM(prompt_tokens) AS prompt_tokens, " +
		"SUM(completion_tokens) AS completion_tokens, SUM(cache_read_tokens) AS cache_read_tokens, " +
		"SUM(cache_write_tokens) AS cache_write_tokens, SUM(cost_usd) AS cost_usd, " +
		"SUM(CASE WHEN priced THEN 0 ELSE 1 END) AS unpriced").
		Group("provider, model").Order("cost_usd DESC, model").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("models: usage: %w", err)
	}
	return rows, nil
}

// ModelCallByKey returns the model call recorded under key (ErrNotFound
// when none is).
func (s *Store) ModelCallByKey(ctx context.Context, key string) (ModelCall, error) {
	var c ModelCall
	err := s.db.WithContext(ctx).Where("key = ?", key).Limit(1).Find(&c).Error
	if err != nil {
		return ModelCall{}, fmt.Errorf("models: model call %q: %w", key, err)
	}
	if c.ID == 0 {
		return ModelCall{}, fmt.Errorf("models: model call %q: %w", key, ErrNotFound)
	}
	return c, nil
}
