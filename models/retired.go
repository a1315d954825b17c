package models

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// retiredLineage marks a conversation that is over: its chat moved on to
// a new session (a reset or /new). What runs for it in the background (the
// process tool's commands) is stopped.
type retiredLineage struct {
	LineageID string `gorm:"primaryKey;size:128"`
	RetiredAt int64  // Unix seconds
}

func (retiredLineage) TableName() string { return "retired_lineages" }

// RetireLineage marks the conversation of sessionID (its lineage; the id
// itself for a session not stored yet) as over. Marking it twice is one
// mark.
func (s *Store) RetireLineage(ctx context.Context, sessionID string) error {
	lineage := sessionID
	sess, err := s.Session(ctx, sessionID)
	switch {
	case err == nil && sess.LineageID != "":
		lineage = sess.LineageID
	case err != nil && !errors.Is(err, ErrNotFound):
		return fmt.Errorf("models: retire %q: %w", sessionID, err)
	}
	row := retiredLineage{LineageID: lineage, RetiredAt: now().Unix()}
	if err := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
		return fmt.Errorf("models: retire %q: %w", lineage, err)
	}
	return nil
}

// Retired returns those of the lineage ids that are marked over.
func (s *Store) Retired(ctx context.Context, lineages []string) ([]string, error) {
	var out []string
	err := s.db.WithContext(ctx).Model(&retiredLineage{}).Where("lineage_id IN ?", lineages).Pluck("lineage_id", &out).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, fmt.Errorf("models: retired lineages: %w", err)
	}
	return out, nil
}
