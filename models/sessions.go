package models

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// upsertSession inserts a session, a root of its own lineage owned by
// @owner, or, when it exists, fills in its model if it has none yet (its
// owner is left as it is). With @turns = 1 it also
// counts a new turn, unless @key names the reservation that counted the
// last one (a retry). Both dialects accept this ON CONFLICT form.
const upsertSession = `INSERT INTO sessions (id, model, title, parent_session_id, lineage_id, generation, owner, turn_count, last_reservation, created_at, updated_at)
VALUES (@id, @model, '', '', @id, 0, @owner, @turns, @key, @now, @now)
ON CONFLICT (id) DO UPDATE SET
	turn_count = sessions.turn_count + CASE WHEN @key <> '' AND sessions.last_reservation = @key THEN 0 ELSE @turns END,
	last_reservation = CASE WHEN @turns > 0 THEN @key ELSE sessions.last_reservation END,
	model = CASE WHEN sessions.model = '' THEN excluded.model ELSE sessions.model END,
	updated_at = CASE WHEN @turns > 0 THEN excluded.updated_at ELSE sessions.updated_at END
RETURNING turn_count`

// NextTurn starts a new turn of a session and returns its number, counting
// from 1. It creates the session, with model, if it does not exist; an
// existing session without a model gets this one. Concurrent callers get
// distinct, consecutive numbers. A non-empty key makes the reservation
// idempotent: called again with the key of the session's latest
// reservation, it returns that turn's number instead of counting another.
func (s *Store) NextTurn(ctx context.Context, sessionID, model, key string) (int, error) {
	if err := checkID("session ID", sessionID, maxSessionIDLen); err != nil {
		return 0, fmt.Errorf("models: next turn: %w", err)
	}
	n, err := s.upsertSession(ctx, sessionID, model, "", 1, key)
	if err != nil {
		return 0, fmt.Errorf("models: next turn of session %q: %w", sessionID, err)
	}
	return n, nil
}

// CountTurn makes turn n count among the session's turns: a session that
// counts fewer counts n, and its latest reservation is forgotten (a retry
// of it reserves anew rather than take a number now in use). Turns that
// were reserved (NextTurn) are counted already.
func (s *Store) CountTurn(ctx context.Context, sessionID string, n int) error {
	err := s.db.WithContext(ctx).Exec(`UPDATE sessions SET turn_count = @n, last_reservation = '' WHERE id = @id AND turn_count < @n`,
		map[string]any{"id": sessionID, "n": n}).Error
	if err != nil {
		return fmt.Errorf("models: count turn %d of session %q: %w", n, sessionID, err)
	}
	return nil
}

// EnsureSession returns the session, creating it with model if it does not
// exist (the operator's: see EnsureOwnedSession); an existing session
// without a model gets this one.
func (s *Store) EnsureSession(ctx context.Context, sessionID, model string) (*Session, error) {
	if err := checkID("session ID", sessionID, maxSessionIDLen); err != nil {
		return nil, fmt.Errorf("models: ensure session: %w", err)
	}
	if _, err := s.upsertSession(ctx, sessionID, model, "", 0, ""); err != nil {
		return nil, fmt.Errorf("models: ensure session %q: %w", sessionID, err)
	}
	return s.Session(ctx, sessionID)
}

func (s *Store) upsertSession(ctx context.Context, id, model, owner string, turns int, key string) (int, error) {
	var count int
	err := s.db.WithContext(ctx).Raw(upsertSession, map[string]any{
		"id":    id,
		"model": EncodeText(model),
		"owner": EncodeText(owner),
		"turns": turns,
		"key":   EncodeText(key),
		"now":   now(),
	}).Scan(&count).Error
	return count, err
}

// Session returns the session with the given ID, or ErrNotFound.
func (s *Store) Session(ctx context.Context, id string) (*Session, error) {
	var sess Session
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&sess).Error; err != nil {
		return nil, fmt.Errorf("models: session %q: %w", id, notFound(err))
	}
	return &sess, nil
}

// SessionSystemPrompt returns the system prompt stored with a session
// ("" before its first turn built one), or ErrNotFound. It reads that
// column alone: a model call needs the prompt, not the rest of the row.
func (s *Store) SessionSystemPrompt(ctx context.Context, id string) (string, error) {
	var sess Session
	if err := s.db.WithContext(ctx).Select("system_prompt").Where("id = ?", id).Take(&sess).Error; err != nil {
		return "", fmt.Errorf("models: system prompt of session %q: %w", id, notFound(err))
	}
	return sess.SystemPrompt, nil
}

// SessionKeys returns a session's lineage (Session.LineageID) and owner,
// or ErrNotFound, reading those columns alone.
func (s *Store) SessionKeys(ctx context.Context, id string) (lineage, owner string, err error) {
	var sess Session
	if err := s.db.WithContext(ctx).Select("id", "lineage_id", "owner").Where("id = ?", id).Take(&sess).Error; err != nil {
		return "", "", fmt.Errorf("models: lineage and owner of session %q: %w", id, notFound(err))
	}
	return sess.LineageID, sess.Owner, nil
}

// Sessions lists sessions, most recently updated first; limit <= 0 lists
// all of them.
func (s *Store) Sessions(ctx context.Context, limit int) ([]Session, error) {
	return listSessions(s.db.WithContext(ctx), limit)
}

// listSessions runs q for sessions, most recently updated first, at most
// limit of them (all when limit <= 0).
func listSessions(q *gorm.DB, limit int) ([]Session, error) {
	q = q.Order("updated_at DESC").Order("id")
	if limit > 0 {
		q = q.Limit(limit)
	}
	var sessions []Session
	if err := q.Find(&sessions).Error; err != nil {
		return nil, fmt.Errorf("models: list sessions: %w", err)
	}
	return sessions, nil
}

// SetSessionTitle sets a session's title; ErrNotFound if it does not exist.
func (s *Store) SetSessionTitle(ctx context.Context, id, title string) error {
	res := s.db.WithContext(ctx).Model(&Session{}).Where("id = ?", id).Update("title", EncodeText(title))
	if res.Error != nil {
		return fmt.Errorf("models: set title of session %q: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("models: set title of session %q: %w", id, ErrNotFound)
	}
	return nil
}

// SetSystemPromptOnce stores a session's system prompt unless it already has
// one, and returns the prompt the session keeps (the first one stored wins,
// so concurrent or retried callers agree).
func (s *Store) SetSystemPromptOnce(ctx context.Context, sessionID, prompt string) (string, error) {
	err := s.db.WithContext(ctx).Model(&Session{}).
		Where("id = ? AND (system_prompt IS NULL OR system_prompt = '')", sessionID).
		Update("system_prompt", EncodeText(prompt)).Error
	if err != nil {
		return "", fmt.Errorf("models: set system prompt of %q: %w", sessionID, err)
	}
	sess, err := s.Session(ctx, sessionID)
	if err != nil {
		return "", err
	}
	return sess.SystemPrompt, nil
}
