package models

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"
)

// SearchHit is one message matching a search, with its neighbours.
type SearchHit struct {
	Message Message
	// Before and After are the messages right around it in its session.
	Before, After []Message
}

// SearchGroup gathers the hits of one lineage (see Store.CompactSession):
// a session and the sessions compacted from it or into it count as one
// conversation. Groups come with the most recent hit's group first.
type SearchGroup struct {
	// LineageID is the ID of the lineage's root session.
	LineageID string
	// SessionID is the newest session (highest generation) of SessionIDs.
	SessionID string
	// SessionIDs are the sessions with hits, in the order of their first hit.
	SessionIDs []string
	// Hits are newest first. A message copied into a child session and its
	// original are one hit: the newest session's copy.
	Hits []SearchHit
}

// searchBackend is the dialect's full-text search: SQLite FTS5, PostgreSQL
// text search.
type searchBackend interface {
	migrateSearch(tx *gorm.DB) error
	// searchIDs returns ids of visible messages containing every term (a
	// word, or words that must follow each other) in the sessions within
	// scope, newest first, leaving out the messages of background sessions.
	searchIDs(db *gorm.DB, terms []string, scope Scope, limit int) ([]int64, error)
}

// searchOverfetch is how many more matches SearchMessages asks the index
// for than it returns, so that copies dropped as duplicates leave room.
const searchOverfetch = 4

// SearchMessages finds messages containing every word of query (full-text,
// any case, in any order; a "quoted phrase" must appear as written, see
// searchTerms) in every session within scope but the engine's own (memory
// reviews, whose messages copy a conversation: see IsBackgroundSession),
// at most limit of them (10 when limit <= 0), each with
// `around` messages of its own session on both sides, grouped by lineage.
// Within a lineage, a hit whose role and content equal those of a newer hit
// in another session is dropped: it is the original of a copy. No model is
// involved.
func (s *Store) SearchMessages(ctx context.Context, scope Scope, query string, limit, around int) ([]SearchGroup, error) {
	phrase := strings.TrimSpace(query)
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
	terms := searchTerms(phrase)
	if len(terms) == 0 {
		return nil, nil // no word to look for: nothing matches
	}
	for i, t := range terms {
		terms[i] = EncodeText(t)
	}
	db := s.db.WithContext(ctx)
	ids, err := backend.searchIDs(db, terms, scope, limit*searchOverfetch)
	if err != nil {
		return nil, fmt.Errorf("models: search %q: %w", phrase, err)
	}
	msgs, sessions, err := s.searchRows(db, ids)
	if err != nil {
		return nil, fmt.Errorf("models: search %q: %w", phrase, err)
	}

	type lineageHits struct {
		group SearchGroup
		gen   int               // generation of group.SessionID
		seen  map[string]string // role NUL content of a kept hit -> its session
	}
	var groups []*lineageHits
	index := map[string]*lineageHits{}
	hits := 0
	for _, id := range ids {
		m, ok := msgs[id]
		if !ok {
			continue // deleted meanwhile
		}
		root, gen := m.SessionID, 0
		if sess, ok := sessions[m.SessionID]; ok {
			root, gen = sess.LineageID, sess.Generation
		}
		g := index[root]
		if g == nil {
			g = &lineageHits{group: SearchGroup{LineageID: root}, gen: -1, seen: map[string]string{}}
			index[root] = g
			groups = append(groups, g)
		}
		key := m.Role + "\x00" + m.Content
		if kept, dup := g.seen[key]; dup && kept != m.SessionID {
			continue
		} else if !dup {
			g.seen[key] = m.SessionID
		}

		hit := SearchHit{Message: m}
		if around > 0 {
			if hit.Before, err = s.neighbours(ctx, &m, around, true); err != nil {
				return nil, err
			}
			if hit.After, err = s.neighbours(ctx, &m, around, false); err != nil {
				return nil, err
			}
		}
		if !slices.Contains(g.group.SessionIDs, m.SessionID) {
			g.group.SessionIDs = append(g.group.SessionIDs, m.SessionID)
		}
		if gen > g.gen {
			g.group.SessionID, g.gen = m.SessionID, gen
		}
		g.group.Hits = append(g.group.Hits, hit)
		if hits++; hits == limit {
			break
		}
	}
	out := make([]SearchGroup, 0, len(groups))
	for _, g := range groups {
		if len(g.group.Hits) > 0 {
			out = append(out, g.group)
		}
	}
	return out, nil
}

// searchRows loads the messages with the given IDs, by ID, and the sessions
// they belong to, by session ID (only those that exist).
func (s *Store) searchRows(db *gorm.DB, ids []int64) (map[int64]Message, map[string]Session, error) {
	msgs := map[int64]Message{}
	sessions := map[string]Session{}
	if len(ids) == 0 {
		return msgs, sessions, nil
	}
	var rows []Message
	if err := db.Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, nil, fmt.Errorf("load matching messages: %w", err)
	}
	var sessionIDs []string
	for _, m := range rows {
		msgs[m.ID] = m
		if !slices.Contains(sessionIDs, m.SessionID) {
			sessionIDs = append(sessionIDs, m.SessionID)
		}
	}
	var found []Session
	err := db.Select("id", "lineage_id", "generation").Where("id IN ?", sessionIDs).Find(&found).Error
	if err != nil {
		return nil, nil, fmt.Errorf("load sessions of matching messages: %w", err)
	}
	for _, sess := range found {
		sessions[sess.ID] = sess
	}
	return msgs, sessions, nil
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

// sqliteFTSIndex is what makes an FTS5 index <table>_fts over one text
// column of table, kept in step by triggers on it; fresh (the index is
// new) adds its build from the rows already there. The escapes of stored
// text (see EncodeText) are separators, so the words around them are
// found. Pure.
func sqliteFTSIndex(table, column string, fresh bool) []string {
	fts := table + "_fts"
	r := strings.NewReplacer("{t}", table, "{f}", fts, "{c}", column)
	stmts := []string{
		r.Replace(`CREATE VIRTUAL TABLE IF NOT EXISTS {f} USING fts5({c}, content='{t}', content_rowid='id', tokenize="unicode61 separators '`) + escapeSeq + `'")`,
		r.Replace(`CREATE TRIGGER IF NOT EXISTS {f}_ai AFTER INSERT ON {t} BEGIN
			INSERT INTO {f}(rowid, {c}) VALUES (new.id, new.{c}); END`),
		r.Replace(`CREATE TRIGGER IF NOT EXISTS {f}_ad AFTER DELETE ON {t} BEGIN
			INSERT INTO {f}({f}, rowid, {c}) VALUES ('delete', old.id, old.{c}); END`),
		r.Replace(`CREATE TRIGGER IF NOT EXISTS {f}_au AFTER UPDATE OF {c} ON {t} BEGIN
			INSERT INTO {f}({f}, rowid, {c}) VALUES ('delete', old.id, old.{c});
			INSERT INTO {f}(rowid, {c}) VALUES (new.id, new.{c}); END`),
	}
	if fresh {
		stmts = append(stmts, r.Replace(`INSERT INTO {f}({f}) VALUES ('rebuild')`))
	}
	return stmts
}

// SQLite: an FTS5 index kept in step with messages by triggers.
func (d *sqliteDialect) migrateSearch(tx *gorm.DB) error {
	var defs []string
	if err := tx.Raw(`SELECT sql FROM sqlite_master WHERE name = 'messages_fts'`).Scan(&defs).Error; err != nil {
		return err
	}
	if len(defs) > 0 && !strings.Contains(defs[0], "separators") {
		// An index made before escapes existed: make it again.
		if err := tx.Exec(`DROP TABLE messages_fts`).Error; err != nil {
			return fmt.Errorf("full-text index: drop the old one: %w", err)
		}
		defs = nil
	}
	stmts := sqliteFTSIndex("messages", "content", len(defs) == 0)
	for _, q := range stmts {
		if err := tx.Exec(q).Error; err != nil {
			return fmt.Errorf("full-text index: %w", err)
		}
	}
	return nil
}

func (d *sqliteDialect) searchIDs(db *gorm.DB, terms []string, scope Scope, limit int) ([]int64, error) {
	inScope, scopeArgs := scope.sessionIDCond("m.session_id")
	args := append(append([]any{fts5Query(terms), false, len(ReviewSessionPrefix), ReviewSessionPrefix}, scopeArgs...), limit)
	var ids []int64
	err := db.Raw(`SELECT m.id FROM messages_fts f JOIN messages m ON m.id = f.rowid
		WHERE messages_fts MATCH ? AND m.hidden = ? AND substr(m.session_id, 1, ?) <> ?`+inScope+` ORDER BY m.id DESC LIMIT ?`,
		args...).Scan(&ids).Error
	return ids, err
}

// postgresSearchChars is how much of a message PostgreSQL indexes for
// search: a text search vector holds at most 1 MB, and a longer message of
// distinct words would be refused (SQLSTATE 54000), so only its first
// postgresSearchChars characters are searchable.
const postgresSearchChars = 100_000

// postgresSearchVector is the text search vector of a message: the start
// of its content with the escapes of stored text (see EncodeText) turned
// into spaces, so the words around them are found.
var postgresSearchVector = fmt.Sprintf(`to_tsvector('simple', replace(left(content, %d), '%s', ' '))`,
	postgresSearchChars, escapeSeq)

// PostgreSQL: a GIN index over the messages' text search vectors. Earlier
// indexes, over the whole content, are replaced.
func (d *postgresDialect) migrateSearch(tx *gorm.DB) error {
	for _, q := range []string{
		`DROP INDEX IF EXISTS idx_messages_fts`,
		`DROP INDEX IF EXISTS idx_messages_fts_words`,
		`CREATE INDEX IF NOT EXISTS idx_messages_search ON messages USING GIN (` + postgresSearchVector + `)`,
	} {
		if err := tx.Exec(q).Error; err != nil {
			return fmt.Errorf("full-text index: %w", err)
		}
	}
	return nil
}

func (d *postgresDialect) searchIDs(db *gorm.DB, terms []string, scope Scope, limit int) ([]int64, error) {
	var ids []int64
	// Every term is a phrase query (a word alone is a phrase of one), all
	// of them required.
	parts := make([]string, len(terms))
	args := make([]any, 0, len(terms)+2)
	for i, t := range terms {
		parts[i] = `phraseto_tsquery('simple', replace(?, '` + escapeSeq + `', ' '))`
		args = append(args, t)
	}
	inScope, scopeArgs := scope.sessionIDCond("messages.session_id")
	args = append(append(args, false, len(ReviewSessionPrefix), ReviewSessionPrefix), scopeArgs...)
	args = append(args, limit)
	err := db.Raw(`SELECT id FROM messages WHERE `+postgresSearchVector+` @@ (`+strings.Join(parts, " && ")+`)
		AND hidden = ? AND substr(session_id, 1, ?) <> ?`+inScope+` ORDER BY id DESC LIMIT ?`, args...).Scan(&ids).Error
	return ids, err
}
