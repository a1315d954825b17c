package models

import (
	"context"
	"strings"
)

// ReviewSessionPrefix starts the id of a session the engine makes for
// itself to review a conversation for memory ("review.<session>.<turn>",
// see workflows.ReviewSessionID). Such a session is nobody's conversation.
const ReviewSessionPrefix = "review."

// IsBackgroundSession reports whether id names a session the engine made
// for itself (a memory review), not one a person or job talked in. Pure.
func IsBackgroundSession(id string) bool { return strings.HasPrefix(id, ReviewSessionPrefix) }

// VisibleSessions is Sessions without the background sessions (see
// IsBackgroundSession): the conversations people and jobs had, most
// recently updated first, at most limit of them (all when limit <= 0).
func (s *Store) VisibleSessions(ctx context.Context, limit int) ([]Session, error) {
	return listSessions(s.db.WithContext(ctx).Where("substr(id, 1, ?) <> ?", len(ReviewSessionPrefix), ReviewSessionPrefix), limit)
}
