package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	// The pure-Go SQLite driver, registered as "sqlite". The embedded
	// Temporal server uses the same registration, and the gorm dialector
	// (github.com/libtnb/sqlite, see gormSQLite) is built on it, so the
	// binary links one SQLite and needs no cgo.
	moderncsqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteDriverName is the database/sql driver registered by modernc.org/sqlite.
const sqliteDriverName = "sqlite"

// sqliteMaxOpenConns caps one Store's connections to a SQLite file: WAL lets
// readers proceed alongside the single writer, and more connections would
// only queue on the write lock.
const sqliteMaxOpenConns = 4

// sqliteDefaultPragmas are applied to every connection unless the DSN sets
// the same pragma. busy_timeout makes a connection wait for the write lock
// held by another connection or process instead of failing with SQLITE_BUSY.
// The journal mode is persistent, so connect sets WAL mode once instead.
var sqliteDefaultPragmas = []string{
	"busy_timeout(10000)",
	"foreign_keys(1)",
	"synchronous(NORMAL)",
}

type sqliteDialect struct {
	dsn      string     // the driver DSN, defaults added
	location string     // dsn before its parameters: a path or a "file:" URI
	query    url.Values // dsn's parameters
	path     string     // the database file; empty when in memory
	memory   bool
	wal      bool // connect switches the file to WAL mode
}

// newSQLiteDialect accepts a file path, optionally prefixed with "sqlite://",
// or a SQLite "file:" URI, each optionally followed by "?" and driver
// parameters. It adds the pragmas in sqliteDefaultPragmas, time values in
// SQLite's text format and write-locking transactions (_txlock=immediate),
// so that a transaction that reads before it writes cannot fail with
// SQLITE_BUSY when it upgrades its lock.
func newSQLiteDialect(dsn string) (*sqliteDialect, error) {
	dsn = strings.TrimPrefix(dsn, "sqlite://")
	location, rawQuery, _ := strings.Cut(dsn, "?")
	query, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, fmt.Errorf("%w: sqlite parameters: %v", ErrInvalidDSN, err)
	}

	path := location
	isURI := strings.HasPrefix(location, "file:")
	if isURI {
		path, err = sqliteURIPath(location)
		if err != nil {
			return nil, err
		}
	}
	memory := path == ":memory:" || query.Get("mode") == "memory"
	if path == "" && !memory {
		return nil, fmt.Errorf("%w: no sqlite file name", ErrInvalidDSN)
	}

	for _, pragma := range sqliteDefaultPragmas {
		if !hasPragma(query, pragmaName(pragma)) {
			query.Add("_pragma", pragma)
		}
	}
	if query.Get("_time_format") == "" && query.Get("_time_integer_format") == "" {
		query.Set("_time_format", "sqlite")
	}
	if query.Get("_timezone") == "" {
		query.Set("_timezone", "UTC")
	}
	if query.Get("_txlock") == "" {
		query.Set("_txlock", "immediate")
	}

	d := &sqliteDialect{
		dsn:      location + "?" + query.Encode(),
		location: location,
		query:    query,
		memory:   memory,
		wal:      !memory && !hasPragma(query, "journal_mode"),
	}
	if !memory {
		d.path = path
	}
	return d, nil
}

// poolDSN is the DSN the connection pool uses: dsn as a "file:" URI with
// mode=rw, so that SQLite opens the file without ever creating it, unless
// the database is in memory or the DSN chose a mode itself.
func (d *sqliteDialect) poolDSN() string {
	if d.memory || d.query.Has("mode") {
		return d.dsn
	}
	location := d.location
	if !strings.HasPrefix(location, "file:") {
		location = "file:" + escapeURIPath(d.path)
	}
	q := url.Values{}
	for k, v := range d.query {
		q[k] = v
	}
	q.Set("mode", "rw")
	return location + "?" + q.Encode()
}

// escapeURIPath escapes a file path for a SQLite "file:" URI: every byte
// but unreserved characters and "/" as %XX, which SQLite decodes.
func escapeURIPath(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		c := path[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~/", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// sqliteURIPath extracts the file path of a "file:" URI.
func sqliteURIPath(uri string) (string, error) {
	rest := strings.TrimPrefix(uri, "file:")
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		authority, path, _ := strings.Cut(after, "/")
		if authority != "" && authority != "localhost" {
			return "", fmt.Errorf("%w: sqlite URI names host %q", ErrInvalidDSN, authority)
		}
		rest = "/" + path
	}
	path, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("%w: sqlite URI path: %v", ErrInvalidDSN, err)
	}
	return path, nil
}

// pragmaName returns the lower-case name of a pragma statement such as
// "journal_mode(WAL)" or "foreign_keys = on".
func pragmaName(pragma string) string {
	name := pragma
	if i := strings.IndexAny(name, "(= "); i >= 0 {
		name = name[:i]
	}
	return strings.ToLower(strings.TrimSpace(name))
}

func hasPragma(query url.Values, name string) bool {
	return slices.ContainsFunc(query["_pragma"], func(p string) bool { return pragmaName(p) == name })
}

func (d *sqliteDialect) name() string { return "sqlite" }

func (d *sqliteDialect) open(create bool) (*sql.DB, error) {
	if !d.memory {
		dir := filepath.Dir(d.path)
		info, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("sqlite database directory: %w", err)
		}
		if !info.IsDir() {
			return nil, fmt.Errorf("sqlite database directory %s is not a directory", dir)
		}
		if create {
			err = createPrivateFile(d.path)
		} else {
			_, err = os.Stat(d.path)
			if errors.Is(err, fs.ErrNotExist) {
				err = fmt.Errorf("%w: %s does not exist", ErrStoreGone, d.path)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	// The file exists now: the pool's connections open it without
	// creating it (mode=rw), so a file removed under a running process is
	// not silently replaced by a new, empty database.
	connector, err := newStmtCachingConnector(d.poolDSN())
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	db := sql.OpenDB(connector)
	if d.memory {
		// Every connection to ":memory:" is a separate database: keep
		// exactly one, forever.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
		return db, nil
	}
	db.SetMaxOpenConns(sqliteMaxOpenConns)
	db.SetMaxIdleConns(sqliteMaxOpenConns)
	return db, nil
}

// createPrivateFile creates the database file, when missing, readable and
// writable only by its owner whatever the umask. SQLite gives the -wal and
// -shm files the mode of the database file, so they stay private too. An
// empty file is an empty SQLite database.
func createPrivateFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create sqlite database %s: %w", path, err)
	}
	if err := errors.Join(f.Chmod(0o600), f.Close()); err != nil {
		return fmt.Errorf("restrict sqlite database %s to its owner: %w", path, err)
	}
	return nil
}

// SQLiteFile returns the database file a SQLite DSN names, or "" for a
// PostgreSQL or in-memory database or a DSN that does not parse.
func SQLiteFile(dsn string) string {
	d, err := newDialect(dsn)
	if err != nil {
		return ""
	}
	if s, ok := d.(*sqliteDialect); ok {
		return s.path
	}
	return ""
}

// connect opens a connection, applying the DSN's pragmas, and switches the
// file to WAL mode unless the DSN chose a journal mode. Switching needs a
// moment of exclusive access, which SQLite does not wait for when another
// connection opens the same new file at once, so it is retried until ctx
// expires.
func (d *sqliteDialect) connect(ctx context.Context, db *sql.DB) error {
	if err := db.PingContext(ctx); err != nil {
		return err
	}
	if !d.wal {
		return nil
	}
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		var mode string
		err := db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode)
		switch {
		case err == nil && strings.EqualFold(mode, "wal"):
			return nil
		case err == nil:
			return fmt.Errorf("cannot switch %s to WAL mode: journal mode is %s", d.path, mode)
		case !isSQLiteBusy(err):
			return fmt.Errorf("switch to WAL mode: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("switch to WAL mode: %w", err)
		case <-time.After(delay):
		}
	}
}

// isSQLiteBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED,
// extended codes included.
func isSQLiteBusy(err error) bool {
	var sqliteErr *moderncsqlite.Error
	if !errors.As(err, &sqliteErr) {
		return false
	}
	code := sqliteErr.Code() & 0xff
	return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
}

func (d *sqliteDialect) gormDialector(db *sql.DB) gorm.Dialector {
	return newGormSQLite(d.dsn, db)
}

// lockMigrations needs no statement: with _txlock=immediate the migration
// transaction holds the database's write lock from its start.
func (d *sqliteDialect) lockMigrations(*gorm.DB) error { return nil }
