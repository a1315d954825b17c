package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	sqliteschema "go.temporal.io/server/schema/sqlite"
)

// errSchemaOnly is returned by the schemaTx methods the schema setup never
// calls.
var errSchemaOnly = errors.New("embedded: schema setup connection supports Exec only")

// createDatabase writes a fresh database at path: fill runs on one
// connection to a temporary file, which is then renamed into place, so path
// exists only once fill succeeded and a crash during first start leaves
// nothing half-made behind. The file is in plain rollback-journal mode
// (SQLite's default, one file) with synchronous=FULL (also the default
// there), so each commit is synced; the server turns on WAL when it opens it.
func createDatabase(ctx context.Context, path string, fill func(context.Context, *sql.Conn) error) error {
	tmp := path + ".init"
	for _, p := range []string{tmp, tmp + "-journal"} {
		if err := removeIfExists(p); err != nil {
			return err
		}
	}
	if err := createPrivateFile(tmp); err != nil {
		return err
	}
	if err := onConn(ctx, tmp, fill); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("%w: move new database into place: %w", ErrDataDir, err)
	}
	return syncDir(filepath.Dir(path))
}

// onConn runs f on one connection to the database at path.
func onConn(ctx context.Context, path string, f func(context.Context, *sql.Conn) error) (err error) {
	db, err := sql.Open("sqlite", "file:"+uriPath(path)+"?mode=rwc")
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", path, cerr)
		}
	}()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("%w: open %s: %w", ErrDataDir, path, err)
	}
	defer func() { _ = conn.Close() }() // db.Close reports
	return f(ctx, conn)
}

// writeMainSchema creates the server's whole schema on conn, in one
// transaction.
func writeMainSchema(ctx context.Context, conn *sql.Conn) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%w: begin schema transaction: %w", ErrDataDir, err)
	}
	if err := sqliteschema.SetupSchemaOnDB(&schemaTx{ctx: ctx, tx: tx, name: "main"}); err != nil {
		return errors.Join(fmt.Errorf("create schema: %w", err), tx.Rollback())
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit schema: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("%w: open %s for sync: %w", ErrDataDir, dir, err)
	}
	return errors.Join(d.Sync(), d.Close())
}

// schemaTx lets the server's schema setup run its statements inside our own
// transaction. Only Exec is used by that setup.
type schemaTx struct {
	ctx  context.Context
	tx   *sql.Tx
	name string
}

var _ sqlplugin.AdminDB = (*schemaTx)(nil)

func (s *schemaTx) Exec(stmt string, args ...any) error {
	_, err := s.tx.ExecContext(s.ctx, stmt, args...)
	return err
}

func (s *schemaTx) DbName() string     { return s.name }
func (s *schemaTx) PluginName() string { return "sqlite" }
func (s *schemaTx) Close() error       { return nil }

func (s *schemaTx) ExpectedVersion() string { return "" }
func (s *schemaTx) VerifyVersion() error    { return errSchemaOnly }

func (s *schemaTx) CreateSchemaVersionTables() error                 { return errSchemaOnly }
func (s *schemaTx) ReadSchemaVersion(string) (string, error)         { return "", errSchemaOnly }
func (s *schemaTx) UpdateSchemaVersion(string, string, string) error { return errSchemaOnly }
func (s *schemaTx) WriteSchemaUpdateLog(string, string, string, string) error {
	return errSchemaOnly
}
func (s *schemaTx) ListTables(string) ([]string, error) { return nil, errSchemaOnly }
func (s *schemaTx) DropTable(string) error              { return errSchemaOnly }
func (s *schemaTx) DropAllTables(string) error          { return errSchemaOnly }
func (s *schemaTx) CreateDatabase(string) error         { return errSchemaOnly }
func (s *schemaTx) DropDatabase(string) error           { return errSchemaOnly }
