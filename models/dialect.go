package models

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// connectTimeout bounds how long Open waits for the database to answer.
const connectTimeout = 5 * time.Second

// dialect isolates what differs between PostgreSQL and SQLite: DSN handling,
// the database/sql driver and its pool settings, and how concurrent schema
// migrations are serialised. The SQL the Store issues (including its
// INSERT ... ON CONFLICT upserts and RETURNING clauses) is accepted by both.
type dialect interface {
	// name is "postgres" or "sqlite".
	name() string
	// open returns a database handle with its connection pool configured.
	// It does not connect yet. create allows it to create a missing
	// database file.
	open(create bool) (*sql.DB, error)
	// connect checks that the database answers and prepares it for use,
	// within ctx's deadline.
	connect(ctx context.Context, db *sql.DB) error
	// gormDialector wraps an opened handle for gorm.
	gormDialector(db *sql.DB) gorm.Dialector
	// lockMigrations runs first inside the migration transaction and keeps
	// other processes from migrating the same database until it commits.
	lockMigrations(tx *gorm.DB) error
}

// newDialect selects the dialect for dsn and validates the DSN.
func newDialect(dsn string) (dialect, error) {
	dsn = strings.TrimSpace(dsn)
	if dsn == "" {
		return nil, fmt.Errorf("%w: empty DSN", ErrInvalidDSN)
	}
	lower := strings.ToLower(dsn)
	if strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://") {
		return newPostgresDialect(dsn)
	}
	return newSQLiteDialect(dsn)
}
