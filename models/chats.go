package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Chat is a messaging chat's current session and settings (the gateway's).
type Chat struct {
	// Key is the chat's session key ("telegram:dm:42").
	Key       string `gorm:"primaryKey;size:512;serializer:text"`
	SessionID string `gorm:"size:128"`
	// Generation counts the chat's sessions (a reset or /new starts the
	// next); Previous is the session before this one.
	Generation int
	Previous   string `gorm:"size:128"`
	// Model is the chat's model (/model), empty for the worker's.
	Model      string `gorm:"size:200;serializer:text"`
	LastActive time.Time
	// Target is where deliveries to the chat go ("email:<address>:<thread>",
	// "slack:<channel>:<thread>"); empty for a chat stored before targets
	// were, whose target is read from its key (KeyTarget).
	Target string `gorm:"size:600;serializer:text"`
}

func (Chat) TableName() string { return "gateway_chats" }

// ChatState returns the chat of key; ok is false when it has none yet.
func (s *Store) ChatState(ctx context.Context, key string) (Chat, bool, error) {
	var c Chat
	err := s.db.WithContext(ctx).Where("key = ?", EncodeText(key)).Take(&c).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return Chat{}, false, nil
	case err != nil:
		return Chat{}, false, fmt.Errorf("models: chat %q: %w", key, err)
	}
	return c, true, nil
}

// SaveChat stores a chat's state.
func (s *Store) SaveChat(ctx context.Context, c Chat) error {
	if err := checkID("chat key", EncodeText(c.Key), maxIdemKeyLen); err != nil {
		return fmt.Errorf("models: save chat: %w", err)
	}
	c.LastActive = c.LastActive.UTC()
	if err := s.db.WithContext(ctx).Save(&c).Error; err != nil {
		return fmt.Errorf("models: save chat %q: %w", c.Key, err)
	}
	return nil
}

// homeChat is where deliveries with the target "home" go (/sethome).
type homeChat struct {
	ID     int    `gorm:"primaryKey"`
	Target string `gorm:"size:600;serializer:text"`
}

func (homeChat) TableName() string { return "gateway_home" }

// SetHome makes target ("telegram:<chat>", "slack:<channel>") the home
// chat.
func (s *Store) SetHome(ctx context.Context, target string) error {
	if err := s.db.WithContext(ctx).Save(&homeChat{ID: 1, Target: target}).Error; err != nil {
		return fmt.Errorf("models: set home: %w", err)
	}
	return nil
}

// Home is the home chat's target ("" when none was set).
func (s *Store) Home(ctx context.Context) (string, error) {
	var h homeChat
	err := s.db.WithContext(ctx).Where("id = ?", 1).Take(&h).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("models: home: %w", err)
	}
	return h.Target, nil
}

// ChatTargetOfSession returns the delivery target of the chat whose
// current session is sessionID; found is false when no chat's current
// session is it.
func (s *Store) ChatTargetOfSession(ctx context.Context, sessionID string) (string, bool, error) {
	if sessionID == "" {
		return "", false, nil
	}
	var c Chat
	err := s.db.WithContext(ctx).Where("session_id = ?", sessionID).Order("key").Limit(1).Take(&c).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("models: chat of session %q: %w", sessionID, err)
	}
	if c.Target != "" {
		return c.Target, true, nil
	}
	return KeyTarget(c.Key), true, nil
}

// KeyTarget reads a delivery target ("telegram:<chat>") from a chat's
// session key ("telegram:dm:<chat>[:...]"), for a chat stored without its
// target: the key's third field, which loses a thread that was part of
// the chat's id; "" when the key is not one. Pure.
func KeyTarget(key string) string {
	parts := strings.Split(key, ":")
	if len(parts) < 3 || parts[0] == "" || parts[2] == "" {
		return ""
	}
	return parts[0] + ":" + parts[2]
}
