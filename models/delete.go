package models

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// DeleteSession removes a session and everything stored for it: messages,
// turns, todo list, approval grants and live events. ErrNotFound when there
// is no such session.
func (s *Store) DeleteSession(ctx context.Context, sessionID string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Where("id = ?", sessionID).Delete(&Session{})
		if res.Error != nil {
			return fmt.Errorf("models: delete session %q: %w", sessionID, res.Error)
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("models: delete session %q: %w", sessionID, ErrNotFound)
		}
		turnIDs := tx.Model(&Turn{}).Select("id").Where("session_id = ?", sessionID)
		for _, step := range []struct {
			what  string
			model any
			where string
			arg   any
		}{
			{"events", &Event{}, "turn_id IN (?)", turnIDs},
			{"messages", &Message{}, "session_id = ?", sessionID},
			{"turns", &Turn{}, "session_id = ?", sessionID},
			{"todo list", &todoList{}, "session_id = ?", sessionID},
			{"grants", &approvalGrant{}, "scope = ?", sessionID},
		} {
			if err := tx.Where(step.where, step.arg).Delete(step.model).Error; err != nil {
				return fmt.Errorf("models: delete the %s of session %q: %w", step.what, sessionID, err)
			}
		}
		return nil
	})
}
