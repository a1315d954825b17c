package models

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// DeleteSession removes a session and everything stored for it: messages,
// turns, todo list, approval grants, live events, its summary and its
// vector (recall across sessions) and the blocks its turns recalled. ErrNotFound when there
// is no such session.
//
// Only that session of its lineage goes: its parent and its child stay.
// The child is reparented to the deleted session's parent (none when the
// root is deleted), so the chain stays whole and Tip of an ancestor still
// reaches the newest session; the child keeps its LineageID and Generation.
func (s *Store) DeleteSession(ctx context.Context, sessionID string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var gone Session
		if err := tx.Select("id", "parent_session_id").Where("id = ?", sessionID).Take(&gone).Error; err != nil {
			return fmt.Errorf("models: delete session %q: %w", sessionID, notFound(err))
		}
		if err := changedRow(tx.Where("id = ?", sessionID).Delete(&Session{})); err != nil {
			return fmt.Errorf("models: delete session %q: %w", sessionID, err)
		}
		err := tx.Model(&Session{}).Where("parent_session_id = ?", sessionID).
			UpdateColumn("parent_session_id", gone.ParentSessionID).Error
		if err != nil {
			return fmt.Errorf("models: delete session %q: reparent its child: %w", sessionID, err)
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
			{"summary", &SessionSummary{}, "session_id = ?", sessionID},
			{"recalled blocks", &recallBlock{}, "session_id = ?", sessionID},
		} {
			if err := tx.Where(step.where, step.arg).Delete(step.model).Error; err != nil {
				return fmt.Errorf("models: delete the %s of session %q: %w", step.what, sessionID, err)
			}
		}
		return nil
	})
}
