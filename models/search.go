package models

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// SearchHit is one message matching a search, with its neighbours.
type SearchHit struct {
	Message Message
	// Before and After are the messages right around it in its session.
	Before, After []Message
}

// SearchGroup gathers a session's hits, most recent session first.
type SearchGroup struct {
	SessionID string
	Hits      []SearchHit
}

// searchBackend is the dialect's full-text search: SQLite FTS5, PostgreSQL
// text search.
type searchBackend interface {
	migrateSearch(tx *gorm.DB) error
	// searchIDs returns ids of visible messages matching the phrase, newest first.
	searchIDs(db *gorm.DB, phrase string, limit int) ([]int64, error)
}

// SearchMessages finds messages containing phrase (full-text, any case) in
// every session, grouped by session, each with `around` messages of context
// on both sides. No model is involved.
func (s *Store) SearchMessages(ctx context.Context, phrase string, limit, around int) ([]SearchGroup, error) {
	phrase = strings.TrimSpace(phrase)
	if phrase == "" {
		return nil, fmt.Errorf("models: search: %w: empty query", ErrInvalidArgument)
	}
	if limit <= 0 {
		limit = 10
	}
	backend, ok := s.dialect.(searchBackend)
	if !ok {
		return nil, fmt.Errorf("models: search is not supported on %s", s.dialect.name())
	}
	ids, err := backend.searchIDs(s.db.WithContext(ctx), phrase, limit)
	if err != nil {
		return nil, fmt.Errorf("models: search %q: %w", phrase, err)
	}
	var groups []SearchGroup
	index := map[string]int{}
	for _, id := range ids {
		m, err := s.Message(ctx, id)
		if err != nil {
			return nil, err
		}
		hit := SearchHit{Message: *m}
		if around > 0 {
			if hit.Before, err = s.neighbours(ctx, m, around, true); err != nil {
				return nil, err
			}
			if hit.After, err = s.neighbours(ctx, m, around, false); err != nil {
				return nil, err
			}
		}
		i, seen := index[m.SessionID]
		if !seen {
			i = len(groups)
			index[m.SessionID] = i
			groups = append(groups, SearchGroup{SessionID: m.SessionID})
		}
		groups[i].Hits = append(groups[i].Hits, hit)
	}
	return groups, nil
}

// neighbours returns up to n visible messages before or after m in its session.
func (s *Store) neighbours(ctx context.Context, m *Message, n int, before bool) ([]Message, error) {
	q := s.db.WithContext(ctx).Where("session_id = ? AND hidden = ?", m.SessionID, false).Limit(n)
	if before {
		q = q.Where("id < ?", m.ID).Order("id DESC")
	} else {
		q = q.Where("id > ?", m.ID).Order("id")
	}
	var out []Message
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: messages around %d: %w", m.ID, err)
	}
	if before {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

// SQLite: an FTS5 index kept in step with messages by triggers.
func (d *sqliteDialect) migrateSearch(tx *gorm.DB) error {
	var n int64
	if err := tx.Raw(`SELECT count(*) FROM sqlite_master WHERE name = 'messages_fts'`).Scan(&n).Error; err != nil {
		return err
	}
	stmts := []string{
		`CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(content, content='messages', content_rowid='id')`,
		`CREATE TRIGGER IF NOT EXISTS messages_fts_ai AFTER INSERT ON messages BEGIN
			INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END`,
		`CREATE TRIGGER IF NOT EXISTS messages_fts_ad AFTER DELETE ON messages BEGIN
			INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content); END`,
		`CREATE TRIGGER IF NOT EXISTS messages_fts_au AFTER UPDATE OF content ON messages BEGIN
			INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
			INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END`,
	}
	if n == 0 {
		stmts = append(stmts, `INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')`)
	}
	for _, q := range stmts {
		if err := tx.Exec(q).Error; err != nil {
			return fmt.Errorf("full-text index: %w", err)
		}
	}
	return nil
}

func (d *sqliteDialect) searchIDs(db *gorm.DB, phrase string, limit int) ([]int64, error) {
	var ids []int64
	quoted := `"` + strings.ReplaceAll(phrase, `"`, `""`) + `"`
	err := db.Raw(`SELECT m.id FROM messages_fts f JOIN messages m ON m.id = f.rowid
		WHERE messages_fts MATCH ? AND m.hidden = ? ORDER BY m.id DESC LIMIT ?`, quoted, false, limit).Scan(&ids).Error
	return ids, err
}

// PostgreSQL: a GIN index over the messages' text search vectors.
func (d *postgresDialect) migrateSearch(tx *gorm.DB) error {
	return tx.Exec(`CREATE INDEX IF NOT EXISTS idx_messages_fts ON messages USING GIN (to_tsvector('simple', content))`).Error
}

func (d *postgresDialect) searchIDs(db *gorm.DB, phrase string, limit int) ([]int64, error) {
	var ids []int64
	err := db.Raw(`SELECT id FROM messages WHERE to_tsvector('simple', content) @@ phraseto_tsquery('simple', ?)
		AND hidden = ? ORDER BY id DESC LIMIT ?`, phrase, false, limit).Scan(&ids).Error
	return ids, err
}
