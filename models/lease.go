package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// lease is a named lease: one holder at a time, until it expires.
type lease struct {
	Name      string `gorm:"primaryKey;size:256"`
	Holder    string `gorm:"size:256"`
	ExpiresAt time.Time
	// LastUpdateAt and LastUpdateID say what the holder last took, and
	// LastError why its last poll failed ("" when it did not): what
	// `talaria gateway status` shows.
	LastUpdateAt *time.Time
	LastUpdateID string `gorm:"size:128;serializer:text"`
	LastError    string `gorm:"size:300;serializer:text"`
}

// TakeLease takes (or renews) the lease name for holder until now+ttl,
// unless another holder has it unexpired; it reports whether holder has
// it, and who does.
func (s *Store) TakeLease(ctx context.Context, name, holder string, ttl time.Duration, now time.Time) (held bool, current string, err error) {
	if name == "" || holder == "" || len(name) > 256 || len(holder) > 256 {
		return false, "", fmt.Errorf("models: take lease %q: invalid name or holder", name)
	}
	db := s.db.WithContext(ctx)
	until := now.Add(ttl).UTC()
	res := db.Model(&lease{}).Where("name = ? AND (holder = ? OR expires_at < ?)", name, holder, now.UTC()).
		Updates(map[string]any{"holder": holder, "expires_at": until})
	if res.Error != nil {
		return false, "", fmt.Errorf("models: take lease %q: %w", name, res.Error)
	}
	if res.RowsAffected == 1 {
		return true, holder, nil
	}
	res = db.Clauses(clause.OnConflict{DoNothing: true}).Create(&lease{Name: name, Holder: holder, ExpiresAt: until})
	if res.Error != nil {
		return false, "", fmt.Errorf("models: take lease %q: %w", name, res.Error)
	}
	if res.RowsAffected == 1 {
		return true, holder, nil
	}
	var l lease
	if err := db.Where("name = ?", name).Take(&l).Error; err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return false, "", fmt.Errorf("models: take lease %q: %w", name, err)
	}
	return false, l.Holder, nil
}

// ReleaseLease gives the lease up, if holder has it.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string) error {
	if err := s.db.WithContext(ctx).Where("name = ? AND holder = ?", name, holder).Delete(&lease{}).Error; err != nil {
		return fmt.Errorf("models: release lease %q: %w", name, err)
	}
	return nil
}

// Lease is who holds the lease name and until when ("" when no one).
func (s *Store) Lease(ctx context.Context, name string) (holder string, until time.Time, err error) {
	var l lease
	err = s.db.WithContext(ctx).Where("name = ?", name).Take(&l).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("models: lease %q: %w", name, err)
	}
	return l.Holder, l.ExpiresAt, nil
}

// LeaseInfo is a lease as Leases lists it.
type LeaseInfo struct {
	Name         string     `json:"name"`
	Holder       string     `json:"holder"`
	ExpiresAt    time.Time  `json:"expires_at"`
	LastUpdateAt *time.Time `json:"last_update_at,omitempty"`
	LastUpdateID string     `json:"last_update_id,omitempty"`
	LastError    string     `json:"last_error,omitempty"`
}

// NoteLease records, for the holder of the lease name, the update it took
// (updateID, at) or, with updateID empty, how its last poll went (failure
// "" when it went well).
func (s *Store) NoteLease(ctx context.Context, name, holder, updateID string, at time.Time, failure string) error {
	set := map[string]any{"last_error": EncodeText(failure)}
	if updateID != "" {
		t := at.UTC()
		set = map[string]any{"last_update_at": &t, "last_update_id": EncodeText(updateID), "last_error": ""}
	}
	if err := s.db.WithContext(ctx).Model(&lease{}).Where("name = ? AND holder = ?", name, holder).Updates(set).Error; err != nil {
		return fmt.Errorf("models: note lease %q: %w", name, err)
	}
	return nil
}

// Leases lists the leases whose names begin with prefix, by name.
func (s *Store) Leases(ctx context.Context, prefix string) ([]LeaseInfo, error) {
	var rows []lease
	if err := s.db.WithContext(ctx).Order("name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("models: leases: %w", err)
	}
	out := make([]LeaseInfo, 0, len(rows))
	for _, r := range rows {
		if strings.HasPrefix(r.Name, prefix) {
			out = append(out, LeaseInfo(r))
		}
	}
	return out, nil
}
