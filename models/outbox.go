package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// outboxEntry records a message sent to a chat: the gateway sends each
// part of a reply once, and a retried send finds it here.
type outboxEntry struct {
	Key string `gorm:"primaryKey;size:512;serializer:text"`
	// MessageID is the platform's id of the sent message.
	MessageID string `gorm:"size:128;serializer:text"`
	SentAt    time.Time
}

func (outboxEntry) TableName() string { return "outbox" }

// Sent returns the platform message id recorded for key; ok is false when
// nothing was recorded.
func (s *Store) Sent(ctx context.Context, key string) (messageID string, ok bool, err error) {
	var e outboxEntry
	err = s.db.WithContext(ctx).Where("key = ?", EncodeText(key)).Take(&e).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("models: outbox %q: %w", key, err)
	}
	return e.MessageID, true, nil
}

// RecordSent records that key was sent as messageID; recording it again
// keeps the first.
func (s *Store) RecordSent(ctx context.Context, key, messageID string) error {
	if err := checkID("outbox key", EncodeText(key), maxIdemKeyLen); err != nil {
		return fmt.Errorf("models: record sent: %w", err)
	}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&outboxEntry{Key: key, MessageID: messageID, SentAt: now()}).Error
	if err != nil {
		return fmt.Errorf("models: record sent %q: %w", key, err)
	}
	return nil
}
