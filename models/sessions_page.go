package models

import (
	"context"
	"math"
)

// SessionPage lists sessions most recently updated first, as Sessions
// does (or VisibleSessions, without the background sessions, unless
// background), skipping the first offset of them and listing at most
// limit (all the rest when limit <= 0).
func (s *Store) SessionPage(ctx context.Context, offset, limit int, background bool) ([]Session, error) {
	q := s.db.WithContext(ctx)
	if !background {
		q = q.Where("substr(id, 1, ?) <> ?", len(ReviewSessionPrefix), ReviewSessionPrefix)
	}
	if offset > 0 {
		q = q.Offset(offset)
		if limit <= 0 {
			q = q.Limit(math.MaxInt32) // an OFFSET needs a LIMIT on SQLite
		}
	}
	return listSessions(q, limit)
}
