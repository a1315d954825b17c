package models

import (
	"context"
	"crypto/rand"
	"fmt"

	"gorm.io/gorm/clause"
)

// installSecret is a random secret of this installation, by name, made
// once and shared by every process of the same database.
type installSecret struct {
	Name  string `gorm:"primaryKey;size:64"`
	Value []byte
}

// Secret returns the installation's secret named name: 32 random bytes
// made by the first process that asks, the same for every process after.
func (s *Store) Secret(ctx context.Context, name string) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("models: make secret %s: %w", name, err)
	}
	db := s.db.WithContext(ctx)
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&installSecret{Name: name, Value: fresh}).Error; err != nil {
		return nil, fmt.Errorf("models: secret %s: %w", name, err)
	}
	var row installSecret
	if err := db.Where("name = ?", name).Take(&row).Error; err != nil {
		return nil, fmt.Errorf("models: secret %s: %w", name, err)
	}
	return row.Value, nil
}
