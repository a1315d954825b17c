package embedded

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/persistence"
	serverschema "go.temporal.io/server/schema"
)

// VisibilityFileName is the SQLite file, next to DBFileName, that holds the
// server's visibility records in file mode: the list of workflows that the
// Web UI and ListWorkflow read.
const VisibilityFileName = "visibility.db"

const (
	// sqliteVisibilityStoreName names the second data store of file mode.
	sqliteVisibilityStoreName = "sqlite-visibility"
	// sqliteVisibilitySchema is the server's visibility schema for SQLite.
	sqliteVisibilitySchema = "sqlite/v3/visibility/schema.sql"
)

// visibilityIndexes are the indexes of executions_visibility a file-mode
// server keeps; the schema's other indexes are not created.
//
// Every index is written on each workflow start, close and search attribute
// change, and the server's SQLite schema has 58: one for each system and
// pre-allocated custom search attribute. With all of them, writing visibility
// records was the largest single cost of starting workflows and half of what
// the one SQLite connection did in a burst. The ones kept serve the queries
// that are made: the Web UI's list (sorted by close and start time) and its
// filters by workflow id, type, status, start and parent/root workflow; the
// server's own filter on the namespace division; Talaria's two keyword
// attributes (session id and stop reason, which take Keyword01 and Keyword02).
// A query on any other attribute still answers, by scanning the table.
var visibilityIndexes = []string{
	"default_idx",
	"by_execution_time",
	"by_workflow_id",
	"by_workflow_type",
	"by_status",
	"by_parent_workflow_id",
	"by_root_workflow_id",
	"by_temporal_namespace_division",
	"by_keyword_01",
	"by_keyword_02",
}

// sqliteVisibilityConfig is the settings of the visibility file next to
// main's file (DBFileName), with main's attributes.
func sqliteVisibilityConfig(main *config.SQL) *config.SQL {
	v := *main
	v.DatabaseName = strings.TrimSuffix(main.DatabaseName, DBFileName) + VisibilityFileName
	v.ConnectAttributes = maps.Clone(main.ConnectAttributes)
	return &v
}

// prepareVisibility makes sure dir holds the visibility file. When it is
// missing and oldMain (an existing DBFileName) is set, the records that
// file kept — Talaria before the visibility file kept them there — are
// copied into the new file, in the transaction that creates it, and then
// removed from oldMain. Crash-safe: the new file appears only complete.
func prepareVisibility(ctx context.Context, dir, oldMain string, logger *slog.Logger) error {
	p := filepath.Join(dir, VisibilityFileName)
	exists, err := dbExists(p)
	if err != nil || exists {
		return err
	}
	var moved int64
	err = createDatabase(ctx, p, func(ctx context.Context, conn *sql.Conn) error {
		var err error
		moved, err = writeVisibility(ctx, conn, oldMain)
		return err
	})
	if err != nil {
		return fmt.Errorf("create %s: %w", p, err)
	}
	if moved == 0 {
		return nil
	}
	logger.LogAttrs(ctx, slog.LevelInfo, "moved workflow visibility records to their own file",
		slog.Int64("records", moved), slog.String("file", p))
	// The old rows are unused now; a failure here leaves them as dead space.
	if err := clearVisibility(ctx, oldMain); err != nil {
		logger.LogAttrs(ctx, slog.LevelWarn, "could not remove the moved visibility records",
			slog.String("file", oldMain), slog.String("error", err.Error()))
	}
	return nil
}

// writeVisibility creates the visibility schema with visibilityIndexes on
// conn and, when from is set, copies from's visibility records. It returns
// how many were copied.
func writeVisibility(ctx context.Context, conn *sql.Conn, from string) (int64, error) {
	stmts, err := visibilitySchema()
	if err != nil {
		return 0, err
	}
	if from != "" {
		if _, err := conn.ExecContext(ctx, "ATTACH DATABASE ? AS old", "file:"+uriPath(from)); err != nil {
			return 0, fmt.Errorf("%w: open %s: %w", ErrDataDir, from, err)
		}
		// The connection closes right after; a failed detach changes nothing.
		defer func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), "DETACH DATABASE old") }()
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("%w: begin: %w", ErrDataDir, err)
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return 0, errors.Join(fmt.Errorf("visibility schema: %q: %w", firstLine(s), err), tx.Rollback())
		}
	}
	var moved int64
	if from != "" {
		if moved, err = copyVisibility(ctx, tx); err != nil {
			return 0, errors.Join(err, tx.Rollback())
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit visibility schema: %w", err)
	}
	return moved, nil
}

// copyVisibility copies the stored (not generated) columns that both
// tables have from the attached database "old".
func copyVisibility(ctx context.Context, tx *sql.Tx) (int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT n.name FROM pragma_table_xinfo('executions_visibility', 'main') n
		JOIN pragma_table_xinfo('executions_visibility', 'old') o ON o.name = n.name
		WHERE n.hidden = 0 AND o.hidden = 0 ORDER BY n.cid`)
	if err != nil {
		return 0, fmt.Errorf("visibility columns: %w", err)
	}
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return 0, errors.Join(fmt.Errorf("visibility columns: %w", err), rows.Close())
		}
		cols = append(cols, `"`+c+`"`)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, fmt.Errorf("visibility columns: %w", err)
	}
	if len(cols) == 0 {
		return 0, nil // the old file has no visibility table
	}
	list := strings.Join(cols, ", ")
	res, err := tx.ExecContext(ctx, "INSERT INTO main.executions_visibility ("+list+") SELECT "+list+" FROM old.executions_visibility")
	if err != nil {
		return 0, fmt.Errorf("copy visibility records: %w", err)
	}
	return res.RowsAffected()
}

// clearVisibility deletes the visibility records of the database at p.
func clearVisibility(ctx context.Context, p string) (err error) {
	db, err := sql.Open("sqlite", "file:"+uriPath(p)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	_, err = db.ExecContext(ctx, "DELETE FROM executions_visibility")
	return err
}

// visibilitySchema is the statements of the server's SQLite visibility
// schema, without the indexes visibilityIndexes does not name.
func visibilitySchema() ([]string, error) {
	body, err := fs.ReadFile(serverschema.Assets(), sqliteVisibilitySchema)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", sqliteVisibilitySchema, err)
	}
	all, err := persistence.LoadAndSplitQueryFromReaders([]io.Reader{bytes.NewReader(body)})
	if err != nil {
		return nil, fmt.Errorf("split %s: %w", sqliteVisibilitySchema, err)
	}
	keep := map[string]bool{}
	for _, name := range visibilityIndexes {
		keep[name] = true
	}
	var out []string
	for _, s := range all {
		if name, ok := indexName(s); ok && !keep[name] {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// indexName is the name a CREATE INDEX statement creates. Pure.
func indexName(stmt string) (string, bool) {
	f := strings.Fields(stmt)
	if len(f) < 3 || !strings.EqualFold(f[0], "CREATE") || !strings.EqualFold(f[1], "INDEX") {
		return "", false
	}
	return f[2], true
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// removeIfExists removes p; a missing p is not an error.
func removeIfExists(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: remove leftover %s: %w", ErrDataDir, p, err)
	}
	return nil
}
