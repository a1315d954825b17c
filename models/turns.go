package models

import (
	"context"
	"fmt"

	"gorm.io/gorm/clause"
)

// UpsertTurn stores t, replacing every column of the stored turn with the
// same ID. On a SQLite file it also checks, after the write, that the file
// is still the one the Store opened: a turn's outcome (a "completed") is
// reported stored only once it is in the file that stays.
func (s *Store) UpsertTurn(ctx context.Context, t Turn) error {
	if err := checkID("turn ID", t.ID, maxTurnIDLen); err != nil {
		return fmt.Errorf("models: upsert turn: %w", err)
	}
	if len(t.SessionID) > maxSessionIDLen {
		return fmt.Errorf("models: upsert turn %q: %w: session ID longer than %d characters",
			t.ID, ErrInvalidArgument, maxSessionIDLen)
	}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "id"}},
		UpdateAll: true,
	}).Create(&t).Error
	if err == nil {
		err = s.checkFile()
	}
	if err != nil {
		return fmt.Errorf("models: upsert turn %q: %w", t.ID, err)
	}
	return nil
}

// Turn returns the turn with the given ID, or ErrNotFound.
func (s *Store) Turn(ctx context.Context, id string) (*Turn, error) {
	var t Turn
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&t).Error; err != nil {
		return nil, fmt.Errorf("models: turn %q: %w", id, notFound(err))
	}
	return &t, nil
}

// Turns returns a session's turns ordered by number.
func (s *Store) Turns(ctx context.Context, sessionID string) ([]Turn, error) {
	var turns []Turn
	err := s.db.WithContext(ctx).Where("session_id = ?", sessionID).Order("number").Order("id").Find(&turns).Error
	if err != nil {
		return nil, fmt.Errorf("models: turns of session %q: %w", sessionID, err)
	}
	return turns, nil
}
