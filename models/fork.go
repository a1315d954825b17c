package models

import (
	"context"
	"fmt"
	"strconv"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ForkSession makes a new session, newID, holding a copy of the
// conversation of session srcID (its messages that are not hidden, in
// order) and returns it. The fork is a root of its own lineage, not a
// child: compaction's links (ParentSessionID, Tip) do not lead to it. It
// keeps the source's model, title, owner and system prompt; it has no turns yet
// (its first turn is number 1), and no todo list or approval grants.
// Each copy is stored under newID with a fresh ID and the idempotency key
// "<newID>/fork/<index>"; its other fields are kept.
//
// A missing source is ErrNotFound; a newID already taken is
// ErrSessionExists; an invalid newID ErrInvalidArgument.
func (s *Store) ForkSession(ctx context.Context, srcID, newID string) (*Session, error) {
	if err := checkID("session ID", newID, maxSessionIDLen); err != nil {
		return nil, fmt.Errorf("models: fork session %q: %w", srcID, err)
	}
	var fork Session
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var src Session
		if err := tx.Where("id = ?", srcID).Take(&src).Error; err != nil {
			return notFound(err)
		}
		fork = Session{ID: newID, Model: src.Model, Title: src.Title, LineageID: newID, Owner: src.Owner, SystemPrompt: src.SystemPrompt}
		res := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "id"}}, DoNothing: true}).Create(&fork)
		if res.Error != nil {
			return fmt.Errorf("create %q: %w", newID, res.Error)
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("%q: %w", newID, ErrSessionExists)
		}
		var msgs []Message
		if err := tx.Where("session_id = ? AND hidden = ?", srcID, false).Order("id").Find(&msgs).Error; err != nil {
			return fmt.Errorf("messages: %w", err)
		}
		for i, m := range msgs {
			m.ID = 0
			m.SessionID = newID
			m.IdemKey = newID + "/fork/" + strconv.Itoa(i)
			if _, err := insertMessage(tx, m); err != nil {
				return fmt.Errorf("copy message %d: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("models: fork session %q into %q: %w", srcID, newID, err)
	}
	return &fork, nil
}
