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
	"time"

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

// prepareVisibility makes sure dir holds a visibility file with the
// visibility table. When it is missing and oldMain (an existing
// DBFileName) is set, the records that file kept — Talaria before the
// visibility file kept them there — are copied into the new file, in the
// transaction that creates it (dropOldVisibility then drops them from
// oldMain). Crash-safe: the new file appears only complete. One without
// the table is set aside and made again; one next to a new workflow store
// is removed first.
func prepareVisibility(ctx context.Context, dir, oldMain string, logger *slog.Logger) error {
	p := filepath.Join(dir, VisibilityFileName)
	if oldMain == "" {
		// A new workflow store: a visibility file left from another one
		// would list workflows that do not exist.
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := removeIfExists(p + suffix); err != nil {
				return err
			}
		}
	}
	exists, err := dbExists(p)
	if err != nil {
		return err
	}
	if exists {
		if usable(ctx, p) {
			return nil
		}
		aside := fmt.Sprintf("%s.unusable-%d", p, time.Now().Unix())
		logger.LogAttrs(ctx, slog.LevelWarn, "the workflow visibility file has no visibility table; it is set aside and made again",
			slog.String("file", p), slog.String("moved_to", aside))
		if err := os.Rename(p, aside); err != nil {
			return fmt.Errorf("%w: set aside %s: %w", ErrDataDir, p, err)
		}
		for _, suffix := range []string{"-wal", "-shm"} {
			if err := removeIfExists(p + suffix); err != nil {
				return err
			}
		}
	}
	var moved int64
	// The copy runs to its end, whatever the start's deadline: it is done
	// once, and a cut copy would start again from nothing.
	err = createDatabase(context.WithoutCancel(ctx), p, func(ctx context.Context, conn *sql.Conn) error {
		var err error
		moved, err = writeVisibility(ctx, conn, oldMain)
		return err
	})
	if err != nil {
		return fmt.Errorf("create %s: %w", p, err)
	}
	if moved > 0 {
		logger.LogAttrs(ctx, slog.LevelInfo, "moved workflow visibility records to their own file",
			slog.Int64("records", moved), slog.String("file", p))
	}
	return nil
}

// usable reports whether the SQLite file at p has the visibility table.
func usable(ctx context.Context, p string) bool {
	ok := false
	err := onConn(ctx, p, func(ctx context.Context, conn *sql.Conn) error {
		return conn.QueryRowContext(ctx, "SELECT count(*) = 1 FROM sqlite_master WHERE type = 'table' AND name = 'executions_visibility'").Scan(&ok)
	})
	return err == nil && ok
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

// oldVisibilityTables are the visibility tables the server's schema also
// puts in the workflow store, unused there once visibility has its file.
var oldVisibilityTables = []string{"executions_visibility", "executions_visibility_fts_text", "executions_visibility_fts_keyword_list"}

// dropOldVisibility drops the visibility tables of the workflow store at
// p, if it has them (once their records are in the visibility file, or a
// new store's empty ones), in one transaction. Each start checks, so a
// crash between the move and the drop is made good by the next start.
func dropOldVisibility(ctx context.Context, p string) error {
	if p == "" {
		return nil
	}
	err := onConn(ctx, p, func(ctx context.Context, conn *sql.Conn) error {
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'executions_visibility'").Scan(&n); err != nil || n == 0 {
			return err
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for _, t := range oldVisibilityTables {
			if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
				return errors.Join(err, tx.Rollback())
			}
		}
		return tx.Commit()
	})
	if err != nil {
		return fmt.Errorf("%w: drop the old visibility tables of %s: %w", ErrDataDir, p, err)
	}
	return nil
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
