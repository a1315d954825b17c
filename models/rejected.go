package models

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
	moderncsqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrRejected reports that the database refused what was written: the
// content itself, not the connection. Retrying the same write cannot
// succeed, so callers must not treat it as transient. Match it with
// errors.Is; the error also wraps the driver's error.
var ErrRejected = errors.New("the database rejected the content")

// rejectedError marks a driver error as ErrRejected.
type rejectedError struct{ err error }

func (e *rejectedError) Error() string { return ErrRejected.Error() + ": " + e.err.Error() }

func (e *rejectedError) Unwrap() []error { return []error{ErrRejected, e.err} }

// isRejection reports whether err is the database refusing content:
// PostgreSQL's data exceptions (SQLSTATE class 22: invalid byte sequence,
// value too long, ...) and program limits (class 54: a value too large for
// an index, too many columns, ...); SQLite's "string or blob too big" and
// datatype mismatch.
func isRejection(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "22") || strings.HasPrefix(pgErr.Code, "54")
	}
	var sqliteErr *moderncsqlite.Error
	if errors.As(err, &sqliteErr) {
		switch sqliteErr.Code() & 0xff {
		case sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_MISMATCH:
			return true
		}
	}
	return false
}

// markRejection wraps err in ErrRejected when the database refused content.
func markRejection(err error) error {
	if err == nil || errors.Is(err, ErrRejected) || !isRejection(err) {
		return err
	}
	return &rejectedError{err: err}
}

// registerRejectionCallbacks makes every statement gorm runs report a
// refusal of content as ErrRejected, in one place rather than at each call.
func registerRejectionCallbacks(db *gorm.DB) error {
	mark := func(tx *gorm.DB) {
		if tx.Error != nil {
			tx.Error = markRejection(tx.Error)
		}
	}
	cb := db.Callback()
	return errors.Join(
		cb.Create().After("gorm:create").Register("talaria:rejected_create", mark),
		cb.Query().After("gorm:query").Register("talaria:rejected_query", mark),
		cb.Update().After("gorm:update").Register("talaria:rejected_update", mark),
		cb.Delete().After("gorm:delete").Register("talaria:rejected_delete", mark),
		cb.Row().After("gorm:row").Register("talaria:rejected_row", mark),
		cb.Raw().After("gorm:raw").Register("talaria:rejected_raw", mark),
	)
}
