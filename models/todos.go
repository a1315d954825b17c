package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// LoadTodosJSON returns a session's todo list as saved by SaveTodosJSON, or
// nil when none is saved.
func (s *Store) LoadTodosJSON(ctx context.Context, sessionID string) ([]byte, error) {
	var row todoList
	err := s.db.WithContext(ctx).Where("session_id = ?", sessionID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("models: load todos of session %q: %w", sessionID, err)
	}
	return []byte(row.Data), nil
}

// SaveTodosJSON replaces a session's todo list with data, which must be
// valid JSON; empty data deletes the list.
func (s *Store) SaveTodosJSON(ctx context.Context, sessionID string, data []byte) error {
	if err := checkID("session ID", sessionID, maxSessionIDLen); err != nil {
		return fmt.Errorf("models: save todos: %w", err)
	}
	db := s.db.WithContext(ctx)
	if len(data) == 0 {
		if err := db.Where("session_id = ?", sessionID).Delete(&todoList{}).Error; err != nil {
			return fmt.Errorf("models: delete todos of session %q: %w", sessionID, err)
		}
		return nil
	}
	if !json.Valid(data) {
		return fmt.Errorf("models: save todos of session %q: %w: not valid JSON", sessionID, ErrInvalidArgument)
	}
	err := db.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "session_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"data", "updated_at"}),
	}).Create(&todoList{SessionID: sessionID, Data: string(data)}).Error
	if err != nil {
		return fmt.Errorf("models: save todos of session %q: %w", sessionID, err)
	}
	return nil
}
