package models

import (
	"context"
	"fmt"
	"time"
)

// PruneEndedEvents deletes the live events no one follows any more: those
// of turns that ended before cut, and those of no known turn written before
// cut. Events of a turn still running are kept whatever their age (status
// reads them). It returns how many it deleted.
func (s *Store) PruneEndedEvents(ctx context.Context, cut time.Time) (int64, error) {
	cut = cut.UTC()
	db := s.db.WithContext(ctx)
	ended := db.Model(&Turn{}).Select("id").Where("ended_at IS NOT NULL AND ended_at < ?", cut)
	res := db.Where("turn_id IN (?)", ended).Delete(&Event{})
	if res.Error != nil {
		return 0, fmt.Errorf("models: prune events of turns ended before %s: %w", cut.Format(time.RFC3339), res.Error)
	}
	n := res.RowsAffected
	known := db.Model(&Turn{}).Select("id")
	res = db.Where("at < ? AND turn_id NOT IN (?)", cut, known).Delete(&Event{})
	if res.Error != nil {
		return n, fmt.Errorf("models: prune events of no turn before %s: %w", cut.Format(time.RFC3339), res.Error)
	}
	return n + res.RowsAffected, nil
}
