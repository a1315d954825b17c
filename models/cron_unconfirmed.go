package models

import (
	"context"
	"fmt"
	"time"
)

// maxUnconfirmedRuns bounds the runs one UnconfirmedRuns call returns.
const maxUnconfirmedRuns = 200

// UnconfirmedRuns lists the runs recorded "started" before recordedBefore
// whose workflow start was never confirmed (no StartedAt): the process that
// recorded one stopped between recording it and starting or confirming its
// workflow. Oldest first, at most 200.
func (s *Store) UnconfirmedRuns(ctx context.Context, recordedBefore time.Time) ([]CronRun, error) {
	var runs []CronRun
	err := s.db.WithContext(ctx).
		Where("status = ? AND started_at IS NULL AND recorded_at < ?", RunStarted, recordedBefore.UTC()).
		Order("recorded_at").Limit(maxUnconfirmedRuns).Find(&runs).Error
	if err != nil {
		return nil, fmt.Errorf("models: unconfirmed cron runs: %w", err)
	}
	return runs, nil
}
