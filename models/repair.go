package models

import (
	"context"
	"fmt"
	"time"
)

// Turn statuses the repair of orphaned turns reads and writes.
const (
	TurnRunning     = "running"
	TurnInterrupted = "interrupted"
)

// RunningTurns returns the turns recorded as running, oldest first, at
// most limit of them (limit <= 0: all).
func (s *Store) RunningTurns(ctx context.Context, limit int) ([]Turn, error) {
	var turns []Turn
	q := s.db.WithContext(ctx).Where("status = ?", TurnRunning).Order("started_at").Order("id")
	if limit > 0 {
		q = q.Limit(limit)
	}
	if err := q.Find(&turns).Error; err != nil {
		return nil, fmt.Errorf("models: running turns: %w", err)
	}
	return turns, nil
}

// InterruptOrphanTurn records a turn that is still recorded as running, but
// has no workflow left to finish it, as interrupted with note as its error.
// It changes nothing (and reports false) when the turn is no longer
// recorded as running: a workflow that finished it meanwhile wins.
func (s *Store) InterruptOrphanTurn(ctx context.Context, id, note string, now time.Time) (bool, error) {
	res := s.db.WithContext(ctx).Model(&Turn{}).
		Where("id = ? AND status = ?", id, TurnRunning).
		Updates(map[string]any{"status": TurnInterrupted, "exit_reason": TurnInterrupted, "error": EncodeText(note), "ended_at": now})
	if res.Error != nil {
		return false, fmt.Errorf("models: interrupt orphan turn %q: %w", id, res.Error)
	}
	if err := s.checkFile(); err != nil {
		return false, fmt.Errorf("models: interrupt orphan turn %q: %w", id, err)
	}
	return res.RowsAffected > 0, nil
}
