package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// SchedulerBeat is the latest sign of life of one running scheduler (the
// one inside `talaria serve`, or a `talaria scheduler`): it records one at
// its start and at every tick, so that anyone using the store can tell
// whether scheduled jobs will run.
type SchedulerBeat struct {
	// ID names the scheduler process, e.g. "host/pid".
	ID     string    `gorm:"primaryKey;size:256"`
	BeatAt time.Time `gorm:"index"`
}

// schedulerBeatKeep is how long a scheduler's last beat is kept after it
// stopped beating.
const schedulerBeatKeep = 7 * 24 * time.Hour

// RecordSchedulerBeat records that the scheduler id was alive at at, and
// forgets schedulers silent for a week.
func (s *Store) RecordSchedulerBeat(ctx context.Context, id string, at time.Time) error {
	if err := checkID("scheduler ID", id, 256); err != nil {
		return fmt.Errorf("models: scheduler beat: %w", err)
	}
	at = at.UTC().Truncate(time.Microsecond)
	db := s.db.WithContext(ctx)
	err := db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "id"}}, DoUpdates: clause.AssignmentColumns([]string{"beat_at"})}).
		Create(&SchedulerBeat{ID: id, BeatAt: at}).Error
	if err != nil {
		return fmt.Errorf("models: scheduler beat of %s: %w", id, err)
	}
	if err := db.Where("beat_at < ?", at.Add(-schedulerBeatKeep)).Delete(&SchedulerBeat{}).Error; err != nil {
		return fmt.Errorf("models: forget silent schedulers: %w", err)
	}
	return nil
}

// LatestSchedulerBeat is the time of the most recent beat of any scheduler
// on this store; zero when none ever beat.
func (s *Store) LatestSchedulerBeat(ctx context.Context) (time.Time, error) {
	var beats []SchedulerBeat
	if err := s.db.WithContext(ctx).Order("beat_at DESC").Limit(1).Find(&beats).Error; err != nil {
		return time.Time{}, fmt.Errorf("models: latest scheduler beat: %w", err)
	}
	if len(beats) == 0 {
		return time.Time{}, nil
	}
	return beats[0].BeatAt.UTC(), nil
}
