package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// toolClaim records that an attempt is about to run a tool call: the claim
// is written before the side effect, the result after it.
type toolClaim struct {
	Key       string `gorm:"primaryKey;size:512;serializer:text"`
	ClaimedAt time.Time
}

// Claimed reports whether key was claimed (ClaimTool) before.
func (s *Store) Claimed(ctx context.Context, key string) (bool, error) {
	var n int64
	if err := s.db.WithContext(ctx).Model(&toolClaim{}).Where("key = ?", key).Count(&n).Error; err != nil {
		return false, fmt.Errorf("models: claimed %q: %w", key, err)
	}
	return n > 0, nil
}

// ClaimTool records a claim on key before a tool runs. It reports whether an
// earlier attempt had already claimed it: that attempt may or may not have
// taken effect.
func (s *Store) ClaimTool(ctx context.Context, key string) (earlier bool, err error) {
	claimed, err := s.ClaimTools(ctx, []string{key})
	if err != nil {
		return false, err
	}
	return claimed[0], nil
}

// ClaimTools is ClaimTool for the calls of a batch, in one transaction:
// earlier[i] reports whether keys[i] was claimed before. Either every key
// is claimed or, on an error, none is.
func (s *Store) ClaimTools(ctx context.Context, keys []string) (earlier []bool, err error) {
	for _, key := range keys {
		if err := checkID("claim key", EncodeText(key), maxIdemKeyLen); err != nil {
			return nil, fmt.Errorf("models: claim tools: %w", err)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	earlier = make([]bool, len(keys))
	at := now()
	claimAll := func(tx *gorm.DB) error {
		for i, key := range keys {
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&toolClaim{Key: key, ClaimedAt: at})
			if res.Error != nil {
				return fmt.Errorf("claim %q: %w", key, res.Error)
			}
			earlier[i] = res.RowsAffected == 0
		}
		return nil
	}
	db := s.db.WithContext(ctx)
	if len(keys) == 1 {
		err = claimAll(db) // one statement needs no transaction of its own
	} else {
		err = db.Transaction(claimAll)
	}
	if err != nil {
		return nil, fmt.Errorf("models: claim tools: %w", err)
	}
	return earlier, nil
}
