package embedded

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/persistence"
	serverschema "go.temporal.io/server/schema"
)

func TestIndexName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		stmt, name string
		ok         bool
	}{
		{"CREATE INDEX by_status ON executions_visibility (namespace_id, status)", "by_status", true},
		{"create index\n  default_idx ON t (a)", "default_idx", true},
		{"CREATE TABLE executions_visibility (a)", "", false},
		{"CREATE UNIQUE INDEX u ON t (a)", "", false},
		{"CREATE INDEX", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		name, ok := indexName(tt.stmt)
		if name != tt.name || ok != tt.ok {
			t.Errorf("indexName(%q) = %q, %v; want %q, %v", tt.stmt, name, ok, tt.name, tt.ok)
		}
	}
}

// TestVisibilitySchemaKeepsOnlyListedIndexes: every kept index is one the
// server's schema has (a renamed one would otherwise vanish unnoticed), and
// the schema written has exactly those indexes, and every other statement.
func TestVisibilitySchemaKeepsOnlyListedIndexes(t *testing.T) {
	t.Parallel()
	full, err := fs.ReadFile(serverschema.Assets(), sqliteVisibilitySchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range visibilityIndexes {
		if !strings.Contains(string(full), "CREATE INDEX "+name+" ") {
			t.Errorf("the server's visibility schema has no index %s", name)
		}
	}
	stmts, err := visibilitySchema()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	tables := 0
	for _, s := range stmts {
		if name, ok := indexName(s); ok {
			got = append(got, name)
		}
		if strings.HasPrefix(strings.TrimSpace(s), "CREATE TABLE") || strings.HasPrefix(strings.TrimSpace(s), "CREATE VIRTUAL TABLE") ||
			strings.HasPrefix(strings.TrimSpace(s), "CREATE TRIGGER") {
			tables++
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(visibilityIndexes))) {
		t.Fatalf("indexes %v, want %v", got, visibilityIndexes)
	}
	if want := strings.Count(string(full), "CREATE TABLE") + strings.Count(string(full), "CREATE VIRTUAL TABLE") +
		strings.Count(string(full), "CREATE TRIGGER"); tables != want {
		t.Fatalf("%d tables and triggers, want %d", tables, want)
	}
}

// TestVisibilityMovedFromOlderHome: a data directory from before the
// visibility file kept its visibility records in temporal.db. The next start
// moves them: a closed and a running workflow are both listed, the running
// one closes normally, and temporal.db keeps none of them.
func TestVisibilityMovedFromOlderHome(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	s1, err := Start(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatalf("first start: %v", err)
	}
	t.Cleanup(func() { _ = s1.Stop() })
	vis := filepath.Join(dir, VisibilityFileName)
	if got := indexesOf(t, vis); !slices.Equal(got, slices.Sorted(slices.Values(visibilityIndexes))) {
		t.Fatalf("indexes of a new visibility file: %v", got)
	}
	c1 := dial(t, s1)
	w1 := startWorker(t, c1)
	if _, err := runEcho(ctx, c1, "closed-before", "x"); err != nil {
		t.Fatal(err)
	}
	run, err := c1.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "running-across", TaskQueue: testTaskQueue}, signalWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	waitWorkflowTaskDone(ctx, t, c1, run.GetID())
	waitListed(ctx, t, c1, "ExecutionStatus = 'Running'", "running-across")
	waitListed(ctx, t, c1, "ExecutionStatus = 'Completed'", "closed-before")
	w1.Stop()
	c1.Close()
	if err := s1.Stop(); err != nil {
		t.Fatal(err)
	}
	toOlderLayout(t, dir)

	s2, err := Start(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatalf("start on the older layout: %v", err)
	}
	t.Cleanup(func() { _ = s2.Stop() })
	if hasTable(t, filepath.Join(dir, DBFileName), "executions_visibility") {
		t.Fatal("temporal.db still has its visibility table")
	}
	c2 := dial(t, s2)
	startWorker(t, c2)
	waitListed(ctx, t, c2, "ExecutionStatus = 'Running'", "running-across")
	waitListed(ctx, t, c2, "ExecutionStatus = 'Completed'", "closed-before")
	if err := c2.SignalWorkflow(ctx, run.GetID(), "", signalName, "on"); err != nil {
		t.Fatal(err)
	}
	if err := c2.GetWorkflow(ctx, run.GetID(), "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	waitListed(ctx, t, c2, "ExecutionStatus = 'Completed'", "closed-before", "running-across")
}

// toOlderLayout puts dir's visibility records into temporal.db, where an
// older Talaria kept them, and removes the visibility file.
func toOlderLayout(t *testing.T, dir string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DBFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// The server's whole visibility schema, 58 indexes and all, as older
	// homes have it in temporal.db.
	full, err := fs.ReadFile(serverschema.Assets(), sqliteVisibilitySchema)
	if err != nil {
		t.Fatal(err)
	}
	stmts, err := persistence.LoadAndSplitQueryFromReaders([]io.Reader{bytes.NewReader(full)})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts {
		if _, err := db.Exec(st); err != nil {
			t.Fatal(err)
		}
	}
	vis := filepath.Join(dir, VisibilityFileName)
	if _, err := db.Exec("ATTACH DATABASE ? AS v", "file:"+vis); err != nil {
		t.Fatal(err)
	}
	var cols []string
	rows, err := db.Query("SELECT name FROM pragma_table_xinfo('executions_visibility', 'v') WHERE hidden = 0")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	rows.Close()
	list := strings.Join(cols, ", ")
	res, err := db.Exec("INSERT INTO main.executions_visibility (" + list + ") SELECT " + list + " FROM v.executions_visibility")
	if err != nil {
		t.Fatal(err)
	}
	// Ours and the server's own system workflows.
	if n, _ := res.RowsAffected(); n < 2 {
		t.Fatalf("moved %d records back, want at least 2", n)
	}
	if _, err := db.Exec("DETACH DATABASE v"); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(vis + suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

// waitListed waits until query lists exactly ids (visibility is written
// after the workflow's own state).
func waitListed(ctx context.Context, t *testing.T, c client.Client, query string, ids ...string) {
	t.Helper()
	var got []string
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err == nil {
			got = got[:0]
			for _, e := range resp.GetExecutions() {
				got = append(got, e.GetExecution().GetWorkflowId())
			}
			if slices.Equal(slices.Sorted(slices.Values(got)), ids) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s lists %v (error %v), want %v", query, got, err, ids)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func indexesOf(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions_visibility' AND sql IS NOT NULL ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

func hasTable(t *testing.T, path, table string) bool {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// TestUnusableVisibilityFileIsMadeAgain: a visibility file without its
// table (emptied, say) is set aside at the next start and made again, and
// the server lists workflows; one left next to a new workflow store is
// not taken for that store's.
func TestUnusableVisibilityFileIsMadeAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	vis := filepath.Join(dir, VisibilityFileName)
	if err := os.WriteFile(vis, []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s1, err := Start(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatalf("start beside a stale visibility file: %v", err)
	}
	if !hasTable(t, vis, "executions_visibility") {
		t.Fatal("the stale visibility file was kept")
	}
	if err := s1.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(vis + suffix)
	}
	if err := os.WriteFile(vis, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s2, err := Start(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatalf("start with an empty visibility file: %v", err)
	}
	t.Cleanup(func() { _ = s2.Stop() })
	aside, _ := filepath.Glob(vis + ".unusable-*")
	if len(aside) != 1 || !hasTable(t, vis, "executions_visibility") {
		t.Fatalf("set aside %v; the new file has its table: %v", aside, hasTable(t, vis, "executions_visibility"))
	}
	c := dial(t, s2)
	startWorker(t, c)
	if _, err := runEcho(ctx, c, "after-repair", "x"); err != nil {
		t.Fatal(err)
	}
	waitListed(ctx, t, c, "ExecutionStatus = 'Completed'", "after-repair")
}
