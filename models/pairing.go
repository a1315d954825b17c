package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// pairingCode is a one-time code that adds a user to a platform's allowed
// users; only its digest is kept.
type pairingCode struct {
	Digest    string `gorm:"primaryKey;size:64"`
	Platform  string `gorm:"size:64"`
	ExpiresAt time.Time
}

// pairedUser is a user added by a pairing code.
type pairedUser struct {
	Platform string `gorm:"primaryKey;size:64"`
	UserID   string `gorm:"primaryKey;size:128"`
	PairedAt time.Time
}

func codeDigest(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// AddPairingCode keeps code (its digest) for platform until expires.
func (s *Store) AddPairingCode(ctx context.Context, platform, code string, expires time.Time) error {
	if err := s.db.WithContext(ctx).Create(&pairingCode{Digest: codeDigest(code), Platform: platform, ExpiresAt: expires.UTC()}).Error; err != nil {
		return fmt.Errorf("models: add pairing code: %w", err)
	}
	return nil
}

// Pair spends code (once, unexpired, for platform) on user, who is then a
// paired user of platform; ok is false for a code that is wrong, spent,
// expired or another platform's.
func (s *Store) Pair(ctx context.Context, platform, code, user string, now time.Time) (ok bool, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Where("digest = ? AND platform = ? AND expires_at > ?", codeDigest(code), platform, now.UTC()).Delete(&pairingCode{})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		ok = true
		return tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&pairedUser{Platform: platform, UserID: user, PairedAt: now.UTC()}).Error
	})
	if err != nil {
		return false, fmt.Errorf("models: pair: %w", err)
	}
	return ok, nil
}

// Paired reports whether user was paired on platform.
func (s *Store) Paired(ctx context.Context, platform, user string) (bool, error) {
	var p pairedUser
	err := s.db.WithContext(ctx).Where("platform = ? AND user_id = ?", platform, user).Take(&p).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("models: paired: %w", err)
	}
	return true, nil
}
