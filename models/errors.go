package models

import "errors"

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
)
