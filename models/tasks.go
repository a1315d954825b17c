package models

import (
	"context"
	"fmt"
)

// linkTask links a task's session to its parent; a session without an
// owner takes the parent's.
const linkTask = `UPDATE sessions SET delegated_from = @parent,
	owner = CASE WHEN owner = '' THEN COALESCE((SELECT p.owner FROM sessions p WHERE p.id = @parent), '') ELSE owner END
WHERE id = @id AND delegated_from = ''`

// LinkTask records that session was made by a delegate_task call of
// parent; a session without an owner takes parent's (a chat's task is the
// chat's). Linking again is a no-op.
func (s *Store) LinkTask(ctx context.Context, session, parent string) error {
	err := s.db.WithContext(ctx).Exec(linkTask, map[string]any{"id": session, "parent": parent}).Error
	if err != nil {
		return fmt.Errorf("models: link task %q to %q: %w", session, parent, err)
	}
	return nil
}

// Tasks are the sessions delegate_task calls of parent made, oldest first.
func (s *Store) Tasks(ctx context.Context, parent string) ([]Session, error) {
	var out []Session
	if err := s.db.WithContext(ctx).Where("delegated_from = ?", parent).Order("created_at, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: tasks of %q: %w", parent, err)
	}
	return out, nil
}
