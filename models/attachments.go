package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// Attachment is the bytes of a file sent or produced in a conversation,
// stored once under the SHA-256 of its content.
type Attachment struct {
	ID        string `gorm:"primaryKey;size:64"`
	MIME      string `gorm:"size:255"`
	Size      int64
	Data      []byte
	CreatedAt time.Time
}

// AttachmentID is the id data is stored under: its SHA-256, in hex. Pure.
func AttachmentID(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// PutAttachment stores data once and returns its id; storing the same
// bytes again changes nothing.
func (s *Store) PutAttachment(ctx context.Context, mime string, data []byte) (string, error) {
	id := AttachmentID(data)
	row := Attachment{ID: id, MIME: mime, Size: int64(len(data)), Data: data, CreatedAt: now()}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "id"}}, DoNothing: true}).Create(&row).Error
	if err != nil {
		return "", fmt.Errorf("models: store attachment of %d bytes: %w", len(data), err)
	}
	return id, nil
}

// Attachment loads stored bytes by id; ErrNotFound when none are stored
// under it.
func (s *Store) Attachment(ctx context.Context, id string) (*Attachment, error) {
	var a Attachment
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&a).Error; err != nil {
		return nil, fmt.Errorf("models: attachment %q: %w", id, notFound(err))
	}
	return &a, nil
}
