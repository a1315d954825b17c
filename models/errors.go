package models

import (
	"errors"

	"gorm.io/gorm"
)

var (
	// ErrNotFound reports that the requested session, message or turn does
	// not exist.
	ErrNotFound = errors.New("not found")

	// ErrInvalidDSN reports a database DSN that is empty or cannot be parsed.
	// Failing to reach a well-formed DSN is reported as a connection error
	// instead.
	ErrInvalidDSN = errors.New("invalid database DSN")

	// ErrInvalidArgument reports a malformed argument, such as a message
	// without an idempotency key or a turn without an ID.
	ErrInvalidArgument = errors.New("invalid argument")

	// ErrSessionExists reports that the ID CompactSession derives for a
	// child session is already taken by a session that is not that child.
	ErrSessionExists = errors.New("session already exists")

	// ErrOwned reports a session that belongs to another owner than the
	// one asking for it (see EnsureOwnedSession).
	ErrOwned = errors.New("the session belongs to another owner")

	// ErrSuperseded reports events of a model call's attempt that a later
	// attempt has replaced: they are not stored (see KindAttempt).
	ErrSuperseded = errors.New("a later attempt superseded these events")
)

// changedRow is the outcome of an update or delete that must touch a row:
// its error, or ErrNotFound when no row changed.
func changedRow(res *gorm.DB) error {
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}
