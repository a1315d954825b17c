package models

import (
	"context"
	"errors"
	"fmt"
)

// Scope is whose past sessions a search finds (recall, session_search).
// The zero Scope is the operator's: the operator owns the machine and its
// database, and finds every session. An owner's scope (a gateway chat's)
// finds only the sessions of that owner. The scope is the asking
// session's (ScopeOf), never something the asked text says.
type Scope struct {
	// Owner is the asking session's owner (Session.Owner); "" is the
	// operator.
	Owner string
}

// ScopeOf is the scope of a search made from sess: its owner's. Pure.
func ScopeOf(sess *Session) Scope { return Scope{Owner: sess.Owner} }

// Everything reports whether the scope finds every session (the
// operator's). Pure.
func (sc Scope) Everything() bool { return sc.Owner == "" }

// sessionCond is the SQL condition, starting with " AND ", that keeps the
// rows of the sessions table aliased alias within the scope, with its
// arguments; nothing for the operator's. Pure.
func (sc Scope) sessionCond(alias string) (string, []any) {
	if sc.Everything() {
		return "", nil
	}
	return " AND " + alias + ".owner = ?", []any{EncodeText(sc.Owner)}
}

// sessionIDCond is the SQL condition, starting with " AND ", that keeps
// the rows whose session ID column column names a session within the
// scope, with its arguments; nothing for the operator's. Pure.
func (sc Scope) sessionIDCond(column string) (string, []any) {
	if sc.Everything() {
		return "", nil
	}
	return " AND " + column + " IN (SELECT id FROM sessions WHERE owner = ?)", []any{EncodeText(sc.Owner)}
}

// claimLineage makes @owner the owner of the sessions of @id's lineage
// that have none: sessions stored before sessions had owners.
var claimLineage = `UPDATE sessions SET owner = @owner WHERE owner = '' AND ` + lineageOf("sessions") + ` =
	(SELECT ` + lineageOf("l") + ` FROM sessions l WHERE l.id = @id)`

// EnsureOwnedSession returns the session id, creating it owned by owner
// when it does not exist: what the gateway does before it hands a chat's
// message to the chat's session, so that the session is the chat's from
// its first turn on. The sessions of id's lineage that have no owner yet
// (stored before sessions had owners: the gateway names a chat's sessions
// after the chat, so they are the chat's) become owner's. A session that
// belongs to another owner keeps it, and the call fails with ErrOwned: an
// owner, once set, never changes. An empty owner is ErrInvalidArgument
// (the operator's sessions are made by EnsureSession).
func (s *Store) EnsureOwnedSession(ctx context.Context, id, owner string) (*Session, error) {
	if err := checkID("session ID", id, maxSessionIDLen); err != nil {
		return nil, fmt.Errorf("models: ensure owned session: %w", err)
	}
	if owner == "" {
		return nil, fmt.Errorf("models: ensure owned session %q: %w: no owner", id, ErrInvalidArgument)
	}
	// Every message of a chat comes here: a session already the owner's
	// costs one read, not the claim's scan of the unowned sessions.
	if sess, err := s.Session(ctx, id); err == nil && sess.Owner != "" {
		if sess.Owner != owner {
			return nil, fmt.Errorf("models: session %q for %q: %w", id, owner, ErrOwned)
		}
		return sess, nil
	} else if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("models: ensure session %q of %q: %w", id, owner, err)
	}
	if _, err := s.upsertSession(ctx, id, "", owner, 0, ""); err != nil {
		return nil, fmt.Errorf("models: ensure session %q of %q: %w", id, owner, err)
	}
	err := s.db.WithContext(ctx).Exec(claimLineage, map[string]any{"id": id, "owner": EncodeText(owner)}).Error
	if err != nil {
		return nil, fmt.Errorf("models: claim session %q for %q: %w", id, owner, err)
	}
	sess, err := s.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	if sess.Owner != owner {
		return nil, fmt.Errorf("models: session %q for %q: %w", id, owner, ErrOwned)
	}
	return sess, nil
}
