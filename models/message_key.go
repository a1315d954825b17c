package models

import (
	"context"
	"fmt"
)

// MessageByKey returns the message stored under an idempotency key, or
// ErrNotFound. A retried activity uses it to find the work it already did.
func (s *Store) MessageByKey(ctx context.Context, key string) (*Message, error) {
	var m Message
	if err := s.db.WithContext(ctx).Where("idem_key = ?", EncodeText(key)).Take(&m).Error; err != nil {
		return nil, fmt.Errorf("models: message with key %q: %w", key, notFound(err))
	}
	return &m, nil
}
