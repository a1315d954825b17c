package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Store reads and writes conversations. It is safe for concurrent use, also
// by several processes sharing one database.
type Store struct {
	db      *gorm.DB
	dialect dialect
	// file is the SQLite file as it was when opened; nil for PostgreSQL
	// and in-memory databases. See Check.
	file *storeFile
	// events wakes the watchers of turns' events (WatchEvents).
	events eventHub
}

// Open connects to the database named by dsn and migrates its schema.
//
// A dsn starting with "postgres://" or "postgresql://" selects PostgreSQL;
// without a connect_timeout parameter connecting gives up after five seconds.
// Any other dsn is a SQLite database file, optionally prefixed with "file:"
// or "sqlite://" and followed by "?" and driver parameters; its directory
// must exist. ":memory:" opens a private in-memory SQLite database.
//
// A missing SQLite file is created, private to its owner; once open, the
// Store's connections never create it again (see Check).
//
// An empty or malformed dsn yields an error wrapping ErrInvalidDSN; a
// database that cannot be reached yields a connection error.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return open(ctx, dsn, true)
}

// OpenExisting is Open for a database another process created: a SQLite
// file that does not exist is an error wrapping ErrStoreGone instead of a
// new, empty database.
func OpenExisting(ctx context.Context, dsn string) (*Store, error) {
	return open(ctx, dsn, false)
}

func open(ctx context.Context, dsn string, create bool) (*Store, error) {
	d, err := newDialect(dsn)
	if err != nil {
		return nil, fmt.Errorf("models: open: %w", err)
	}
	sqlDB, err := d.open(create)
	if err != nil {
		return nil, fmt.Errorf("models: open %s: %w", d.name(), err)
	}

	pingCtx, cancel := context.WithTimeout(ctx, connectTimeout)
	err = d.connect(pingCtx, sqlDB)
	cancel()
	if err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("models: connect to %s: %w", d.name(), err)
	}

	db, err := gorm.Open(d.gormDialector(sqlDB), &gorm.Config{
		Logger:                 logger.Discard,
		NowFunc:                now,
		DisableAutomaticPing:   true,
		SkipDefaultTransaction: true,
	})
	if err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("models: open %s: %w", d.name(), err)
	}

	s := &Store{db: db, dialect: d}
	if sd, ok := d.(*sqliteDialect); ok && !sd.memory {
		if s.file, err = identify(sd.path); err != nil {
			_ = sqlDB.Close()
			return nil, fmt.Errorf("models: open %s: %w", d.name(), err)
		}
	}
	if err := errors.Join(registerRejectionCallbacks(db), s.registerFileGuard()); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("models: open %s: %w", d.name(), err)
	}
	if err := s.migrate(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	return s, nil
}

// now is the clock for CreatedAt and UpdatedAt columns: UTC at the
// microsecond precision both databases keep.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// migrate creates or updates the schema. It runs in one transaction that
// holds a migration lock, so processes opening the same database at once
// do not race each other.
func (s *Store) migrate(ctx context.Context) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.dialect.lockMigrations(tx); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		if err := tx.AutoMigrate(schema...); err != nil {
			return err
		}
		if err := ownLegacyCronJobs(tx); err != nil {
			return err
		}
		if b, ok := s.dialect.(searchBackend); ok {
			if err := b.migrateSearch(tx); err != nil {
				return err
			}
		}
		if b, ok := s.dialect.(recallBackend); ok {
			return b.migrateSummarySearch(tx)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("models: migrate %s schema: %w", s.dialect.name(), err)
	}
	return s.MigrateEvents(ctx)
}

// Close closes the database connections.
func (s *Store) Close() error {
	s.events.close()
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("models: close: %w", err)
	}
	if err := sqlDB.Close(); err != nil {
		return fmt.Errorf("models: close: %w", err)
	}
	return nil
}

// Dialect returns "sqlite" or "postgres".
func (s *Store) Dialect() string { return s.dialect.name() }

// notFound maps gorm's missing-record error to ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ErrNotFound
	}
	return err
}
