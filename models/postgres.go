package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
)

// migrationLockKey is the PostgreSQL advisory lock key that serialises
// schema migrations ("talaria" in ASCII).
const migrationLockKey int64 = 0x74616c61726961

type postgresDialect struct {
	config *pgx.ConnConfig
}

// newPostgresDialect parses a postgres:// or postgresql:// URL. Without an
// explicit connect_timeout, connecting gives up after connectTimeout.
func newPostgresDialect(dsn string) (*postgresDialect, error) {
	// Parse the URL first so that a malformed one is reported without
	// echoing the DSN, which may hold a password.
	if _, err := url.Parse(dsn); err != nil {
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			err = urlErr.Err
		}
		return nil, fmt.Errorf("%w: postgres URL: %v", ErrInvalidDSN, err)
	}
	config, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidDSN, err)
	}
	if config.ConnectTimeout <= 0 {
		config.ConnectTimeout = connectTimeout
	}
	return &postgresDialect{config: config}, nil
}

func (d *postgresDialect) name() string { return "postgres" }

func (d *postgresDialect) open(bool) (*sql.DB, error) {
	db := stdlib.OpenDB(*d.config, stdlib.OptionAfterConnect(scanTimesInUTC))
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(4)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return db, nil
}

// scanTimesInUTC makes a connection return timestamptz values in UTC, as
// the SQLite dialect does, instead of in the local time zone.
func scanTimesInUTC(_ context.Context, conn *pgx.Conn) error {
	conn.TypeMap().RegisterType(&pgtype.Type{
		Name:  "timestamptz",
		OID:   pgtype.TimestamptzOID,
		Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC},
	})
	return nil
}

func (d *postgresDialect) connect(ctx context.Context, db *sql.DB) error {
	return db.PingContext(ctx)
}

func (d *postgresDialect) gormDialector(db *sql.DB) gorm.Dialector {
	return postgres.New(postgres.Config{Conn: db})
}

func (d *postgresDialect) lockMigrations(tx *gorm.DB) error {
	return tx.Exec("SELECT pg_advisory_xact_lock(?)", migrationLockKey).Error
}
