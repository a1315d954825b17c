package models

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

// openCachingPool opens a pool of one statement-caching connection to a
// new SQLite file, and a plain pool to the same file standing for another
// process.
func openCachingPool(t *testing.T) (cached, other *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stmts.db")
	connector, err := newStmtCachingConnector("file:" + path)
	if err != nil {
		t.Fatal(err)
	}
	cached = sql.OpenDB(connector)
	cached.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = cached.Close() })
	other, err = sql.Open(sqliteDriverName, "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	if _, err := cached.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	return cached, other
}

// keptStatements is how many statements the pool's one connection keeps.
func keptStatements(t *testing.T, db *sql.DB) int {
	t.Helper()
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n := -1
	if err := conn.Raw(func(dc any) error { n = len(dc.(*stmtCachingConn).stmts); return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func values(t *testing.T, db *sql.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		dest := make([]any, len(cols))
		for i := range dest {
			dest[i] = new(sql.NullString)
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		row := ""
		for _, d := range dest {
			row += d.(*sql.NullString).String + "|"
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// A kept statement follows a schema another process changed after it was
// prepared: SQLite prepares it again, so it never reads the old table.
func TestKeptStatementFollowsSchemaChanges(t *testing.T) {
	db, other := openCachingPool(t)
	if _, err := db.Exec("INSERT INTO t (v) VALUES (?)", "a"); err != nil {
		t.Fatal(err)
	}
	const query = "SELECT * FROM t WHERE id > ? ORDER BY id"
	if got := values(t, db, query, 0); fmt.Sprint(got) != "[1|a|]" {
		t.Fatalf("before: %v", got)
	}
	if keptStatements(t, db) != 2 {
		t.Fatalf("kept %d statements, want the insert and the select", keptStatements(t, db))
	}
	// Another process adds a column, and then replaces the table.
	if _, err := other.Exec("ALTER TABLE t ADD COLUMN w TEXT; INSERT INTO t (v, w) VALUES ('b', 'x')"); err != nil {
		t.Fatal(err)
	}
	if got := values(t, db, query, 0); fmt.Sprint(got) != "[1|a|| 2|b|x|]" {
		t.Fatalf("after a column was added: %v", got)
	}
	if _, err := other.Exec("DROP TABLE t; CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (id, v) VALUES (7, 'c')"); err != nil {
		t.Fatal(err)
	}
	if got := values(t, db, query, 0); fmt.Sprint(got) != "[7|c|]" {
		t.Fatalf("after the table was replaced: %v", got)
	}
	if _, err := db.Exec("INSERT INTO t (v) VALUES (?)", "d"); err != nil {
		t.Fatalf("kept insert after the table was replaced: %v", err)
	}
	if got := values(t, other, "SELECT v FROM t ORDER BY id"); fmt.Sprint(got) != "[c| d|]" {
		t.Fatalf("rows: %v", got)
	}
}

// A statement whose rows are open is not run again under them: the same
// query meanwhile runs on its own, and both read their rows whole.
func TestKeptStatementBusyWhileRowsOpen(t *testing.T) {
	_, tx := seededTx(t, "a", "b", "c")
	const query = "SELECT v FROM t WHERE id >= ? ORDER BY id"
	outer, err := tx.Query(query, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for outer.Next() {
		var v string
		if err := outer.Scan(&v); err != nil {
			t.Fatal(err)
		}
		inner, err := tx.Query(query, 2)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for inner.Next() {
			n++
		}
		if err := inner.Close(); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s%d", v, n))
	}
	if err := outer.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[a2 b2 c2]" {
		t.Fatalf("got %v", got)
	}
}

// The cache keeps at most stmtCacheSize statements; one evicted while its
// rows are open still reads them to the end.
func TestKeptStatementsBounded(t *testing.T) {
	db, tx := seededTx(t, "a", "b")
	open, err := tx.Query("SELECT v FROM t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	if !open.Next() {
		t.Fatal("no first row")
	}
	for i := range 2 * stmtCacheSize {
		var n int
		if err := tx.QueryRow(fmt.Sprintf("SELECT count(*) + %d FROM t", i)).Scan(&n); err != nil || n != i+2 {
			t.Fatalf("query %d: %d, %v", i, n, err)
		}
	}
	var second string
	if !open.Next() || open.Scan(&second) != nil || second != "b" {
		t.Fatalf("second row of the evicted statement: %q, %v", second, open.Err())
	}
	if err := open.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n := keptStatements(t, db); n > stmtCacheSize {
		t.Fatalf("kept %d statements, more than %d", n, stmtCacheSize)
	}
}

// Schema changes and pragmas are not kept.
func TestCacheable(t *testing.T) {
	for query, want := range map[string]bool{
		"SELECT * FROM t":                  true,
		"  (SELECT 1) UNION SELECT 2":      true,
		"insert into t (v) values (?)":     true,
		"UPDATE t SET v = ?":               true,
		"DELETE FROM t":                    true,
		"WITH x AS (SELECT 1) SELECT 1":    true,
		"CREATE TABLE u (id INTEGER)":      false,
		"PRAGMA journal_mode=WAL":          false,
		"ALTER TABLE t ADD COLUMN w TEXT":  false,
		"BEGIN IMMEDIATE":                  false,
		"SELECT\n1":                        true,
		"DROP INDEX IF EXISTS idx_t_v_old": false,
	} {
		if got := cacheable(query); got != want {
			t.Errorf("cacheable(%q) = %v, want %v", query, got, want)
		}
	}
}

// seededTx is a caching pool whose table t holds values, and a
// transaction on it.
func seededTx(t *testing.T, values ...string) (*sql.DB, *sql.Tx) {
	t.Helper()
	db, _ := openCachingPool(t)
	for _, v := range values {
		if _, err := db.Exec("INSERT INTO t (v) VALUES (?)", v); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return db, tx
}
