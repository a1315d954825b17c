package models

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// maxLineageWalk caps how many child links Tip follows, so that a cycle in
// corrupted data cannot make it loop forever.
const maxLineageWalk = 10_000

// maxChildIDTries bounds the IDs CompactSession tries for a child when
// unrelated sessions hold the derived ones.
const maxChildIDTries = 16

// childIDHashLen is how many hex digits of the root's SHA-256 ChildSessionID
// keeps when it has to shorten a long root.
const childIDHashLen = 12

// ChildSessionID returns the ID of the session of generation gen in the
// lineage whose root is root: root + "~" + gen. When that would be longer
// than a session ID may be (128 characters), the root is cut short and
// followed by "-" and 12 hex digits of its SHA-256, so that the result fits
// and distinct roots still give distinct IDs.
func ChildSessionID(root string, gen int) string {
	suffix := "~" + strconv.Itoa(gen)
	if utf8.RuneCountInString(root)+len(suffix) <= maxSessionIDLen {
		return root + suffix
	}
	sum := sha256.Sum256([]byte(root))
	tag := "-" + hex.EncodeToString(sum[:])[:childIDHashLen]
	return firstRunes(root, maxSessionIDLen-len(tag)-len(suffix)) + tag + suffix
}

// firstRunes returns the first n runes of s.
func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// BeforeCreate makes a session created without a lineage the root of its own.
func (s *Session) BeforeCreate(*gorm.DB) error {
	s.LineageID = cmp.Or(s.LineageID, s.ID)
	return nil
}

// AfterFind fills in the lineage of a session stored before lineages
// existed: such a session is a root, so its lineage is its own ID.
func (s *Session) AfterFind(*gorm.DB) error {
	s.LineageID = cmp.Or(s.LineageID, s.ID)
	return nil
}

// CompactSession replaces the session parentID by a new child session, for
// context compression, and returns the child. In one transaction it creates
// the child, with ID ChildSessionID(root of the lineage, generation), the
// parent's model, title, owner and turn count, and systemPrompt, and
// appends msgs to it in order: copies of the messages kept and the
// summary. Each message is stored under the child's ID with a fresh ID and
// the idempotency key "<child ID>/copy/<index in msgs>"; its other fields
// are kept.
//
// Nothing of the parent changes. A session is compacted at most once: when
// parentID already has a child, that child is returned and nothing is
// written, so a retried or concurrent call gets the same child. A missing
// parent is ErrNotFound. When an unrelated session holds the derived ID,
// the next generation numbers are tried as the ID's suffix (up to 16, then
// ErrSessionExists).
func (s *Store) CompactSession(ctx context.Context, parentID string, systemPrompt string, msgs []Message) (*Session, error) {
	for i := range msgs {
		if len(msgs[i].TurnID) > maxTurnIDLen {
			return nil, fmt.Errorf("models: compact session %q: message %d: %w: turn ID longer than %d characters",
				parentID, i, ErrInvalidArgument, maxTurnIDLen)
		}
	}
	var child Session
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var parent Session
		if err := tx.Where("id = ?", parentID).Take(&parent).Error; err != nil {
			return notFound(err)
		}
		if existing, err := childOf(tx, parentID); err == nil {
			child = *existing
			return nil
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}

		gen := parent.Generation + 1
		created := false
		// An unrelated session may hold the derived ID (say, a root that was
		// deleted and whose ID was used again): the next suffixes are tried.
		for n := gen; n < gen+maxChildIDTries && !created; n++ {
			child = Session{
				ID:              ChildSessionID(parent.LineageID, n),
				Model:           parent.Model,
				Title:           parent.Title,
				ParentSessionID: parent.ID,
				LineageID:       parent.LineageID,
				Generation:      gen,
				Owner:           parent.Owner,
				TurnCount:       parent.TurnCount,
				SystemPrompt:    systemPrompt,
			}
			res := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "id"}}, DoNothing: true}).Create(&child)
			if res.Error != nil {
				return fmt.Errorf("create child %q: %w", child.ID, res.Error)
			}
			if res.RowsAffected == 1 {
				created = true
				break
			}
			// A concurrent call created the child first, or the ID is taken.
			var taken Session
			if err := tx.Where("id = ?", child.ID).Take(&taken).Error; err != nil {
				return fmt.Errorf("load child %q: %w", child.ID, err)
			}
			if taken.ParentSessionID == parent.ID {
				child = taken
				return nil
			}
		}
		if !created {
			return fmt.Errorf("child IDs %q and the %d after it: %w", ChildSessionID(parent.LineageID, gen), maxChildIDTries-1, ErrSessionExists)
		}

		for i, m := range msgs {
			m.ID = 0
			m.SessionID = child.ID
			m.IdemKey = child.ID + "/copy/" + strconv.Itoa(i)
			if _, err := insertMessage(tx, m); err != nil {
				return fmt.Errorf("copy message %d: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("models: compact session %q: %w", parentID, err)
	}
	return &child, nil
}

// childOf returns the child of a session, or ErrNotFound. Should there be
// several, the newest generation wins.
func childOf(db *gorm.DB, id string) (*Session, error) {
	var child Session
	err := db.Where("parent_session_id = ?", id).
		Order("generation DESC").Order("created_at DESC").Order("id").
		Take(&child).Error
	if err != nil {
		return nil, notFound(err)
	}
	return &child, nil
}

// Tip returns the ID of the newest descendant of session id, following
// child links: id itself when it has no child. A missing session is
// ErrNotFound.
func (s *Store) Tip(ctx context.Context, id string) (string, error) {
	db := s.db.WithContext(ctx)
	var n int64
	if err := db.Model(&Session{}).Where("id = ?", id).Count(&n).Error; err != nil {
		return "", fmt.Errorf("models: tip of session %q: %w", id, err)
	}
	if n == 0 {
		return "", fmt.Errorf("models: tip of session %q: %w", id, ErrNotFound)
	}
	tip := id
	if err := descend(db, id, map[string]bool{id: true}, func(child *Session) { tip = child.ID }); err != nil {
		return "", fmt.Errorf("models: tip of session %q: %w", id, err)
	}
	return tip, nil
}

// descend follows the child links from session id, telling visit of each
// child in turn, until a session without one. seen holds the sessions
// already met (id among them): a link back to one is an error, as are
// more than maxLineageWalk generations.
func descend(db *gorm.DB, id string, seen map[string]bool, visit func(*Session)) error {
	for cur := id; len(seen) <= maxLineageWalk; {
		child, err := childOf(db, cur)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("child of %q: %w", cur, err)
		}
		if seen[child.ID] {
			return fmt.Errorf("the links loop back to %q", child.ID)
		}
		seen[child.ID] = true
		visit(child)
		cur = child.ID
	}
	return fmt.Errorf("more than %d generations", maxLineageWalk)
}

// LineageSessions counts the sessions left in the lineage whose root is
// root (the root included, when it is still there).
func (s *Store) LineageSessions(ctx context.Context, root string) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&Session{}).Where("lineage_id = ? OR id = ?", root, root).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("models: sessions of lineage %q: %w", root, err)
	}
	return n, nil
}

// Lineage returns every session of the lineage session id belongs to, the
// root first, ordered by generation. Sessions deleted from the lineage are
// missing from it. A missing session is ErrNotFound.
func (s *Store) Lineage(ctx context.Context, id string) ([]Session, error) {
	db := s.db.WithContext(ctx)
	var sess Session
	if err := db.Where("id = ?", id).Take(&sess).Error; err != nil {
		return nil, fmt.Errorf("models: lineage of session %q: %w", id, notFound(err))
	}
	root := sess.LineageID
	var out []Session
	// A root stored before lineages existed has an empty lineage_id.
	err := db.Where("lineage_id = ? OR id = ?", root, root).
		Order("generation").Order("created_at").Order("id").
		Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: lineage of session %q: %w", id, err)
	}
	return out, nil
}

// Chain returns the sessions of session id's conversation by their links,
// oldest first: its compaction ancestors (parent by parent), itself, and
// its descendants (child by child, as Tip follows them). Unlike Lineage it
// never mixes in another conversation that reuses a deleted root's ID. A
// missing session is ErrNotFound.
func (s *Store) Chain(ctx context.Context, id string) ([]Session, error) {
	db := s.db.WithContext(ctx)
	var self Session
	if err := db.Where("id = ?", id).Take(&self).Error; err != nil {
		return nil, fmt.Errorf("models: chain of session %q: %w", id, notFound(err))
	}
	seen := map[string]bool{id: true}
	up := []Session{self}
	for cur := self; cur.ParentSessionID != "" && len(up) < maxLineageWalk; {
		var parent Session
		err := db.Where("id = ?", cur.ParentSessionID).Take(&parent).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			break // a dangling link: the chain starts here
		}
		if err != nil {
			return nil, fmt.Errorf("models: chain of session %q: parent of %q: %w", id, cur.ID, err)
		}
		if seen[parent.ID] {
			return nil, fmt.Errorf("models: chain of session %q: the links loop back to %q", id, parent.ID)
		}
		seen[parent.ID] = true
		up = append(up, parent)
		cur = parent
	}
	out := make([]Session, 0, len(up))
	for i := len(up) - 1; i >= 0; i-- {
		out = append(out, up[i])
	}
	if err := descend(db, self.ID, seen, func(child *Session) { out = append(out, *child) }); err != nil {
		return nil, fmt.Errorf("models: chain of session %q: %w", id, err)
	}
	return out, nil
}
