package models

import (
	"context"
	"fmt"
)

// LinkTask records that session was made by a delegate_task call of
// parent. Linking again is a no-op.
func (s *Store) LinkTask(ctx context.Context, session, parent string) error {
	err := s.db.WithContext(ctx).Model(&Session{}).Where("id = ? AND delegated_from = ''", session).
		UpdateColumn("delegated_from", parent).Error
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
