// Package models is Talaria's conversation store.
//
// A conversation turn runs as a Temporal workflow, but the messages of the
// conversation are not kept in workflow history: the turn's activities read
// and write them through a Store, which persists sessions, messages, turns and
// per-session todo lists in PostgreSQL or in a SQLite file.
//
// Open picks the database from the DSN: a "postgres://" or "postgresql://"
// URL selects PostgreSQL; anything else names a SQLite file, optionally
// prefixed with "file:" or "sqlite://". Open migrates the schema, so every
// Store it returns is ready to use.
//
// Writes are safe to retry. AppendMessages deduplicates on each message's
// idempotency key, so an activity that is retried after a partial failure
// gets back the rows it already stored instead of duplicating them, and
// NextTurn numbers turns atomically even under concurrent callers.
//
// Several processes may share one SQLite file (for example a server and a
// CLI client): the file is opened in WAL mode with a busy timeout, and write
// transactions take the write lock when they begin, so concurrent writers
// wait for each other instead of failing with SQLITE_BUSY.
//
// Text is stored losslessly on both databases: NUL bytes and invalid UTF-8,
// which PostgreSQL refuses, go through a reversible escape (EncodeText), so
// every text column reads back byte for byte. A Store on a SQLite file
// never creates the file again once open, and refuses to write when the
// file was removed or replaced under it (ErrStoreGone, Check).
//
// Context compression never deletes: CompactSession replaces a long session
// by a child session holding copies of the messages kept plus a summary, and
// the sessions linked that way form a lineage (Tip, Lineage). SearchMessages
// groups its hits by lineage.
//
// Errors are wrapped with context; match the sentinel errors ErrNotFound,
// ErrInvalidDSN, ErrInvalidArgument, ErrSessionExists, ErrRejected (the
// database refused the content: not transient), ErrStoreGone and
// ErrUnreachable with errors.Is.
package models
