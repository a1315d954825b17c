package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// maxKeyCooldownID bounds a pool's and a key's id (digests, see
// internal/keypool).
const maxKeyCooldownID = 64

// KeyCooldown is one key of a model endpoint's key pool resting after a
// failure (a rate limit, a refusal) until a time: no call sends it before.
// The key itself is never stored: KeyID is its digest, Pool the digest of
// its endpoint, Endpoint the endpoint as shown (redacted).
type KeyCooldown struct {
	Pool     string `gorm:"primaryKey;size:64"`
	KeyID    string `gorm:"primaryKey;size:64"`
	Endpoint string `gorm:"type:text;serializer:text"`
	Until    time.Time
	// Class is the failure's class (turnapi.ErrorClass), Status its HTTP
	// status (0 when it had none).
	Class     string `gorm:"size:32"`
	Status    int
	UpdatedAt time.Time
}

// TableName is the table of key cool-downs.
func (KeyCooldown) TableName() string { return "key_cooldowns" }

// SetKeyCooldown records c: the key's cool-down, replacing the one it had.
// A pool or key id that is empty or longer than 64 bytes is an error
// wrapping ErrInvalidArgument.
func (s *Store) SetKeyCooldown(ctx context.Context, c KeyCooldown) error {
	if c.Pool == "" || c.KeyID == "" || len(c.Pool) > maxKeyCooldownID || len(c.KeyID) > maxKeyCooldownID {
		return fmt.Errorf("models: set key cool-down: pool %q, key %q: %w", c.Pool, c.KeyID, ErrInvalidArgument)
	}
	c.Until = c.Until.UTC().Truncate(time.Microsecond)
	c.UpdatedAt = now()
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "pool"}, {Name: "key_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"endpoint", "until", "class", "status", "updated_at"}),
	}).Create(&c).Error
	if err != nil {
		return fmt.Errorf("models: set key cool-down of pool %s key %s: %w", c.Pool, c.KeyID, err)
	}
	return nil
}

// KeyCooldowns returns the cool-downs recorded for a pool's keys, over or
// not, by key id.
func (s *Store) KeyCooldowns(ctx context.Context, pool string) ([]KeyCooldown, error) {
	var out []KeyCooldown
	if err := s.db.WithContext(ctx).Where("pool = ?", pool).Order("key_id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: key cool-downs of pool %s: %w", pool, err)
	}
	return out, nil
}

// AllKeyCooldowns returns every recorded cool-down, over or not, by pool
// and key id.
func (s *Store) AllKeyCooldowns(ctx context.Context) ([]KeyCooldown, error) {
	var out []KeyCooldown
	if err := s.db.WithContext(ctx).Order("pool").Order("key_id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: key cool-downs: %w", err)
	}
	return out, nil
}
