package models

import (
	"database/sql"
	"errors"

	"github.com/libtnb/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/migrator"
)

// gormSQLite is the gorm dialector of a SQLite Store: github.com/libtnb/sqlite
// (pure Go, on modernc.org/sqlite) with a migrator that leaves a current
// schema alone and migrates inside the caller's transaction (see
// sqliteMigrator).
type gormSQLite struct{ sqlite.Dialector }

func newGormSQLite(dsn string, db *sql.DB) gormSQLite {
	return gormSQLite{sqlite.Dialector{DriverName: sqliteDriverName, DSN: dsn, Conn: db}}
}

func (d gormSQLite) Migrator(db *gorm.DB) gorm.Migrator {
	return sqliteMigrator{Migrator: d.Dialector.Migrator(db), db: db, base: d.Dialector}
}

// sqliteMigrator adjusts two behaviours of the SQLite migrator that
// AutoMigrate would otherwise turn into a rebuild of every table on each
// Open, or a stall:
//
//   - ColumnTypes reports a column's length only when its declaration has
//     one. The driver reports TEXT columns of a non-empty table as
//     math.MaxInt64 long, which AutoMigrate took for a change of every
//     sized string field and "fixed" by copying the whole table.
//   - The methods that rebuild a table (SQLite cannot alter a column in
//     place) run on the migration transaction itself. The dialector takes a
//     separate pool connection for them, which waits for the write lock the
//     migration transaction holds (_txlock=immediate) until busy_timeout
//     fails it.
type sqliteMigrator struct {
	gorm.Migrator
	db   *gorm.DB
	base sqlite.Dialector
}

// ColumnTypes is the dialector's, with lengths as declared (see
// declaredLength).
func (m sqliteMigrator) ColumnTypes(value any) ([]gorm.ColumnType, error) {
	types, err := m.Migrator.ColumnTypes(value)
	for i, t := range types {
		types[i] = declaredLength{t}
	}
	return types, err
}

// declaredLength is a column whose length is the one in its declaration,
// if any, never the width of the values it holds.
type declaredLength struct{ column }

// column names gorm.ColumnType for embedding: a field named ColumnType
// would hide the interface's method of that name.
type column = gorm.ColumnType

func (c declaredLength) Length() (int64, bool) {
	if t, ok := c.column.(migrator.ColumnType); ok && t.LengthValue.Valid {
		return t.LengthValue.Int64, true
	}
	return 0, false
}

func (m sqliteMigrator) AlterColumn(value any, field string) error {
	return m.inTransaction().AlterColumn(value, field)
}

func (m sqliteMigrator) DropColumn(value any, name string) error {
	return m.inTransaction().DropColumn(value, name)
}

func (m sqliteMigrator) CreateConstraint(value any, name string) error {
	return m.inTransaction().CreateConstraint(value, name)
}

func (m sqliteMigrator) DropConstraint(value any, name string) error {
	return m.inTransaction().DropConstraint(value, name)
}

func (m sqliteMigrator) DropTable(values ...any) error {
	return m.inTransaction().DropTable(values...)
}

// inTransaction returns the dialector's migrator, made to run its table
// rebuilds on m's transaction when m runs in one: the transaction is
// hidden behind txOnly, so the dialector finds no pool to take another
// connection from and uses the one it was given.
func (m sqliteMigrator) inTransaction() gorm.Migrator {
	if _, ok := m.db.Statement.ConnPool.(*sql.Tx); !ok {
		return m.Migrator
	}
	// A Session with a context clones the statement, so the transaction
	// itself (which gorm commits through its ConnPool) stays as it is.
	db := m.db.Session(&gorm.Session{Context: m.db.Statement.Context})
	db.Statement.ConnPool = txOnly{db.Statement.ConnPool}
	return m.base.Migrator(db)
}

// txOnly is a transaction that does not say which pool it belongs to. It
// is a gorm.TxCommitter, so a transaction begun on it is nested (a
// savepoint); committing or rolling back the outer transaction stays with
// its owner.
type txOnly struct{ gorm.ConnPool }

func (txOnly) Commit() error   { return errNotOwner }
func (txOnly) Rollback() error { return errNotOwner }

var errNotOwner = errors.New("models: the migration transaction ends with its owner")
