package models

import (
	"context"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// AppendMessages stores msgs in order, in one transaction, and returns them
// as stored, with their IDs. A message whose IdemKey is already stored is not
// inserted again: the stored row is returned in its place, so retrying an
// append neither duplicates nor reorders messages. Every message needs a
// SessionID and an IdemKey; the IDs of msgs are ignored.
func (s *Store) AppendMessages(ctx context.Context, msgs []Message) ([]Message, error) {
	if err := checkMessages(msgs); err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return []Message{}, nil
	}
	var stored []Message
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) (err error) {
		stored, err = insertMessages(tx, msgs)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("models: append messages: %w", err)
	}
	return stored, nil
}

// AppendReply stores the model call c (as RecordModelCall does) and its
// reply msgs (as AppendMessages does) in one transaction, and returns
// msgs as stored: a reply and what it cost are stored together, in one
// write instead of two.
func (s *Store) AppendReply(ctx context.Context, c ModelCall, msgs []Message) ([]Message, error) {
	if err := checkMessages(msgs); err != nil {
		return nil, err
	}
	c = modelCallRow(c)
	var stored []Message
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) (err error) {
		if err := insertModelCall(tx, &c); err != nil {
			return fmt.Errorf("record model call %q: %w", c.Key, err)
		}
		stored, err = insertMessages(tx, msgs)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("models: append reply: %w", err)
	}
	return stored, nil
}

// checkMessages rejects messages AppendMessages cannot store.
func checkMessages(msgs []Message) error {
	for i := range msgs {
		if err := checkID("session ID", msgs[i].SessionID, maxSessionIDLen); err != nil {
			return fmt.Errorf("models: append message %d: %w", i, err)
		}
		if err := checkID("idempotency key", EncodeText(msgs[i].IdemKey), maxIdemKeyLen); err != nil {
			return fmt.Errorf("models: append message %d: %w", i, err)
		}
		if len(msgs[i].TurnID) > maxTurnIDLen {
			return fmt.Errorf("models: append message %d: %w: turn ID longer than %d characters",
				i, ErrInvalidArgument, maxTurnIDLen)
		}
	}
	return nil
}

// insertMessages inserts msgs in order within tx (see insertMessage).
func insertMessages(tx *gorm.DB, msgs []Message) ([]Message, error) {
	stored := make([]Message, len(msgs))
	for i, m := range msgs {
		row, err := insertMessage(tx, m)
		if err != nil {
			return nil, fmt.Errorf("message %d (key %q): %w", i, m.IdemKey, err)
		}
		stored[i] = row
	}
	return stored, nil
}

// insertMessage inserts m unless its IdemKey is taken, and returns the row
// stored under that key.
func insertMessage(tx *gorm.DB, m Message) (Message, error) {
	m.ID = 0
	res := tx.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "idem_key"}},
		DoNothing: true,
	}).Create(&m)
	if res.Error != nil {
		return Message{}, res.Error
	}
	if res.RowsAffected > 0 && m.ID != 0 {
		return m, nil
	}
	var existing Message
	if err := tx.Where("idem_key = ?", EncodeText(m.IdemKey)).Take(&existing).Error; err != nil {
		return Message{}, fmt.Errorf("load stored message: %w", err)
	}
	return existing, nil
}

// Messages returns a session's conversation: its messages that are not
// hidden, ordered by ID; none is not an error.
func (s *Store) Messages(ctx context.Context, sessionID string) ([]Message, error) {
	var msgs []Message
	err := s.db.WithContext(ctx).Where("session_id = ? AND hidden = ?", sessionID, false).Order("id").Find(&msgs).Error
	if err != nil {
		return nil, fmt.Errorf("models: messages of session %q: %w", sessionID, err)
	}
	return msgs, nil
}

// Conversation is Messages as a model call reads it: without each
// message's IdemKey and CreatedAt, which a call neither sends nor counts
// (left zero), and so without decoding them for every message of the
// session on every call.
func (s *Store) Conversation(ctx context.Context, sessionID string) ([]Message, error) {
	var msgs []Message
	err := s.db.WithContext(ctx).Select(conversationColumns).
		Where("session_id = ? AND hidden = ?", sessionID, false).Order("id").Find(&msgs).Error
	if err != nil {
		return nil, fmt.Errorf("models: conversation of session %q: %w", sessionID, err)
	}
	for i := range msgs {
		msgs[i].SessionID = sessionID
	}
	return msgs, nil
}

// conversationColumns are the columns Conversation reads: every column
// of Message but idem_key, created_at and the two its query fixes
// (session_id, hidden).
var conversationColumns = []string{"id", "turn_id", "role", "content", "reasoning", "tool_calls",
	"tool_call_id", "name", "finish_reason", "prompt_tokens", "completion_tokens", "replay", "steer", "images"}

// FirstMessage returns a session's first visible message, or ErrNotFound
// when it has none.
func (s *Store) FirstMessage(ctx context.Context, sessionID string) (*Message, error) {
	var m Message
	err := s.db.WithContext(ctx).Where("session_id = ? AND hidden = ?", sessionID, false).Order("id").Take(&m).Error
	if err != nil {
		return nil, fmt.Errorf("models: first message of session %q: %w", sessionID, notFound(err))
	}
	return &m, nil
}

// Message returns the message with the given ID, or ErrNotFound.
func (s *Store) Message(ctx context.Context, id int64) (*Message, error) {
	var m Message
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&m).Error; err != nil {
		return nil, fmt.Errorf("models: message %d: %w", id, notFound(err))
	}
	return &m, nil
}

// AllMessages returns every message of a session, hidden ones included,
// ordered by ID: the full record.
func (s *Store) AllMessages(ctx context.Context, sessionID string) ([]Message, error) {
	var msgs []Message
	err := s.db.WithContext(ctx).Where("session_id = ?", sessionID).Order("id").Find(&msgs).Error
	if err != nil {
		return nil, fmt.Errorf("models: all messages of session %q: %w", sessionID, err)
	}
	return msgs, nil
}

// RevealMessage makes a hidden message part of the conversation again.
// Revealing a visible message is a no-op; a missing one is ErrNotFound.
func (s *Store) RevealMessage(ctx context.Context, id int64) error {
	res := s.db.WithContext(ctx).Model(&Message{}).Where("id = ?", id).Update("hidden", false)
	if res.Error != nil {
		return fmt.Errorf("models: reveal message %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		if _, err := s.Message(ctx, id); err != nil {
			return fmt.Errorf("models: reveal message %d: %w", id, err)
		}
	}
	return nil
}

// HideMessages keeps messages out of the conversation (see Message.Hidden).
func (s *Store) HideMessages(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if err := s.db.WithContext(ctx).Model(&Message{}).Where("id IN ?", ids).Update("hidden", true).Error; err != nil {
		return fmt.Errorf("models: hide messages %v: %w", ids, err)
	}
	return nil
}
