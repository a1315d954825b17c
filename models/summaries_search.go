package models

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// RecallHit is a session whose summary matched a recall's words.
type RecallHit struct {
	SessionID string
	At        time.Time
	// Score is higher for a better match; comparable within one search.
	Score float64
}

// Passage is a message of a past session that matched a recall's words.
type Passage struct {
	MessageID int64
	SessionID string
	Role      string
	Content   string
	At        time.Time
	// Score is higher for a better match; comparable within one search.
	Score float64
}

// recallBackend is the dialect's ranked full-text search for recall: any
// of the words, best first, within a scope, outside one lineage.
type recallBackend interface {
	migrateSummarySearch(tx *gorm.DB) error
	searchSummaries(db *gorm.DB, words []string, scope Scope, exceptLineage string, limit int) ([]RecallHit, error)
	searchPassages(db *gorm.DB, words []string, scope Scope, exceptLineage string, limit int) ([]Passage, error)
}

// SearchSummaries finds the summaries holding any of words, best first (at
// most limit), of the sessions within scope, leaving out the sessions of
// the lineage exceptLineage.
func (s *Store) SearchSummaries(ctx context.Context, scope Scope, words []string, exceptLineage string, limit int) ([]RecallHit, error) {
	words = recallWords(words)
	if len(words) == 0 || limit <= 0 {
		return nil, nil
	}
	b, ok := s.dialect.(recallBackend)
	if !ok {
		return nil, fmt.Errorf("models: summary search is not supported on %s", s.dialect.name())
	}
	hits, err := b.searchSummaries(s.db.WithContext(ctx), words, scope, exceptLineage, limit)
	if err != nil {
		return nil, fmt.Errorf("models: search summaries: %w", err)
	}
	return hits, nil
}

// SearchPassages finds the visible user and assistant messages holding any
// of words, best first (at most limit), in the sessions within scope that
// people and jobs talked in, outside the lineage exceptLineage.
func (s *Store) SearchPassages(ctx context.Context, scope Scope, words []string, exceptLineage string, limit int) ([]Passage, error) {
	words = recallWords(words)
	if len(words) == 0 || limit <= 0 {
		return nil, nil
	}
	b, ok := s.dialect.(recallBackend)
	if !ok {
		return nil, fmt.Errorf("models: passage search is not supported on %s", s.dialect.name())
	}
	hits, err := b.searchPassages(s.db.WithContext(ctx), words, scope, exceptLineage, limit)
	if err != nil {
		return nil, fmt.Errorf("models: search passages: %w", err)
	}
	return hits, nil
}

// recallWords keeps the words that hold a letter or digit, in their stored
// form. Pure.
func recallWords(words []string) []string {
	out := make([]string, 0, len(words))
	for _, w := range words {
		for _, t := range searchTerms(strings.ReplaceAll(w, `"`, " ")) {
			out = append(out, EncodeText(t))
		}
	}
	return out
}

// SQLite: an FTS5 index over the summaries, kept in step by triggers.
func (d *sqliteDialect) migrateSummarySearch(tx *gorm.DB) error {
	var n int64
	if err := tx.Raw(`SELECT count(*) FROM sqlite_master WHERE name = 'session_summaries_fts'`).Scan(&n).Error; err != nil {
		return err
	}
	stmts := sqliteFTSIndex("session_summaries", "summary", n == 0)
	for _, q := range stmts {
		if err := tx.Exec(q).Error; err != nil {
			return fmt.Errorf("summary index: %w", err)
		}
	}
	return nil
}

// fts5AnyQuery is the FTS5 MATCH expression of any of the terms. Pure.
func fts5AnyQuery(terms []string) string {
	return strings.ReplaceAll(fts5Query(terms), `" AND "`, `" OR "`)
}

// FTS5's bm25 is lower for a better match: its negation is the score.
func (d *sqliteDialect) searchSummaries(db *gorm.DB, words []string, scope Scope, exceptLineage string, limit int) ([]RecallHit, error) {
	inScope, scopeArgs := scope.sessionCond("s")
	args := append(append([]any{fts5AnyQuery(words), exceptLineage}, scopeArgs...), limit)
	var out []RecallHit
	err := db.Raw(`SELECT m.session_id AS session_id, m.updated_at AS at, -bm25(session_summaries_fts) AS score
		FROM session_summaries_fts f JOIN session_summaries m ON m.id = f.rowid JOIN sessions s ON s.id = m.session_id
		WHERE session_summaries_fts MATCH ? AND `+lineageOf("s")+` <> ?`+inScope+` ORDER BY bm25(session_summaries_fts) LIMIT ?`,
		args...).Scan(&out).Error
	return out, err
}

func (d *sqliteDialect) searchPassages(db *gorm.DB, words []string, scope Scope, exceptLineage string, limit int) ([]Passage, error) {
	inScope, scopeArgs := scope.sessionCond("s")
	args := append(append([]any{fts5AnyQuery(words), false, len(ReviewSessionPrefix), ReviewSessionPrefix, exceptLineage}, scopeArgs...), limit)
	var out []Passage
	err := db.Raw(`SELECT m.id AS message_id, m.session_id AS session_id, m.role AS role, m.content AS content,
			m.created_at AS at, -bm25(messages_fts) AS score
		FROM messages_fts f JOIN messages m ON m.id = f.rowid JOIN sessions s ON s.id = m.session_id
		WHERE messages_fts MATCH ? AND m.hidden = ? AND m.role IN ('user', 'assistant')
			AND substr(m.session_id, 1, ?) <> ? AND `+lineageOf("s")+` <> ?`+inScope+`
		ORDER BY bm25(messages_fts) LIMIT ?`,
		args...).Scan(&out).Error
	for i := range out {
		out[i].Content = DecodeText(out[i].Content)
	}
	return out, err
}

// postgresSummaryVector is the text search vector of a summary.
var postgresSummaryVector = fmt.Sprintf(`to_tsvector('simple', replace(left(summary, %d), '%s', ' '))`,
	postgresSearchChars, escapeSeq)

// PostgreSQL: a GIN index over the summaries' text search vectors.
func (d *postgresDialect) migrateSummarySearch(tx *gorm.DB) error {
	q := `CREATE INDEX IF NOT EXISTS idx_session_summaries_search ON session_summaries USING GIN (` + postgresSummaryVector + `)`
	if err := tx.Exec(q).Error; err != nil {
		return fmt.Errorf("summary index: %w", err)
	}
	return nil
}

// postgresAnyQuery is the text search query of any of the words, with its
// arguments. Pure.
func postgresAnyQuery(words []string) (string, []any) {
	parts := make([]string, len(words))
	args := make([]any, len(words))
	for i, w := range words {
		parts[i] = `plainto_tsquery('simple', replace(?, '` + escapeSeq + `', ' '))`
		args[i] = w
	}
	return "(" + strings.Join(parts, " || ") + ")", args
}

func (d *postgresDialect) searchSummaries(db *gorm.DB, words []string, scope Scope, exceptLineage string, limit int) ([]RecallHit, error) {
	query, args := postgresAnyQuery(words)
	inScope, scopeArgs := scope.sessionCond("s")
	args = append(append(append(append(append([]any{}, args...), args...), exceptLineage), scopeArgs...), limit)
	var out []RecallHit
	err := db.Raw(`SELECT m.session_id AS session_id, m.updated_at AS at, ts_rank(`+postgresSummaryVector+`, `+query+`) AS score
		FROM session_summaries m JOIN sessions s ON s.id = m.session_id
		WHERE `+postgresSummaryVector+` @@ `+query+` AND `+lineageOf("s")+` <> ?`+inScope+` ORDER BY score DESC LIMIT ?`,
		args...).Scan(&out).Error
	return out, err
}

func (d *postgresDialect) searchPassages(db *gorm.DB, words []string, scope Scope, exceptLineage string, limit int) ([]Passage, error) {
	query, args := postgresAnyQuery(words)
	vector := strings.ReplaceAll(postgresSearchVector, "content", "m.content")
	inScope, scopeArgs := scope.sessionCond("s")
	args = append(append(append(append([]any{}, args...), args...), false, len(ReviewSessionPrefix), ReviewSessionPrefix, exceptLineage), scopeArgs...)
	args = append(args, limit)
	var out []Passage
	err := db.Raw(`SELECT m.id AS message_id, m.session_id AS session_id, m.role AS role, m.content AS content,
			m.created_at AS at, ts_rank(`+vector+`, `+query+`) AS score
		FROM messages m JOIN sessions s ON s.id = m.session_id
		WHERE `+vector+` @@ `+query+` AND m.hidden = ? AND m.role IN ('user', 'assistant')
			AND substr(m.session_id, 1, ?) <> ? AND `+lineageOf("s")+` <> ?`+inScope+`
		ORDER BY score DESC LIMIT ?`, args...).Scan(&out).Error
	for i := range out {
		out[i].Content = DecodeText(out[i].Content)
	}
	return out, err
}
