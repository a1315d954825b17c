package engine

import (
	"context"
	"fmt"

	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/models"
)

// storeSearcher gives the session_search tool the store's full-text search,
// within the asking session's scope (models.Scope).
type storeSearcher struct{ store *models.Store }

func (s storeSearcher) SearchSessions(ctx context.Context, asking, query string, limit int) ([]tools.SearchSession, error) {
	scope, err := s.scopeOf(ctx, asking)
	if err != nil {
		return nil, err
	}
	groups, err := s.store.SearchMessages(ctx, scope, query, limit, 1)
	if err != nil {
		return nil, err
	}
	out := make([]tools.SearchSession, 0, len(groups))
	for _, g := range groups {
		sess := tools.SearchSession{SessionID: g.SessionID}
		for _, h := range g.Hits {
			sess.Matches = append(sess.Matches, tools.SearchMatch{
				Role: h.Message.Role, Content: clipText(h.Message.Content, 600),
				Before: texts(h.Before), After: texts(h.After),
			})
		}
		out = append(out, sess)
	}
	return out, nil
}

// scopeOf is the scope of the asking session: its owner's; the
// operator's without a session. A session that is not stored is an error:
// whose it is is not known.
func (s storeSearcher) scopeOf(ctx context.Context, asking string) (models.Scope, error) {
	if asking == "" {
		return models.Scope{}, nil
	}
	sess, err := s.store.Session(ctx, asking)
	if err != nil {
		return models.Scope{}, fmt.Errorf("session search: the asking session: %w", err)
	}
	return models.ScopeOf(sess), nil
}

func texts(msgs []models.Message) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, m.Role+": "+clipText(m.Content, 300))
	}
	return out
}

func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
