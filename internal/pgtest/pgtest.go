// Package pgtest gives tests a PostgreSQL schema of their own on the server
// named by TALARIA_TEST_POSTGRES_DSN (scripts/with-postgres.sh starts one).
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// EnvDSN names the variable holding the test server's DSN.
const EnvDSN = "TALARIA_TEST_POSTGRES_DSN"

// DSN creates a schema for this test alone and returns a DSN whose
// search_path selects it; the schema is dropped when the test ends. Without
// the variable the test is skipped, or fails when CI=true: CI must run the
// PostgreSQL tests.
func DSN(t testing.TB, prefix string) string {
	t.Helper()
	base := serverDSN(t)
	schema := uniqueName(t, prefix)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open %s: %v", EnvDSN, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA "`+schema+`"`); err != nil {
		_ = admin.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, `DROP SCHEMA "`+schema+`" CASCADE`); err != nil {
			t.Errorf("drop schema: %v", err)
		}
		_ = admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvDSN, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// serverDSN is the test server's DSN; without it the test is skipped, or
// fails when CI=true.
func serverDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvDSN)
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set; CI must run the PostgreSQL tests (use scripts/with-postgres.sh)", EnvDSN)
		}
		t.Skipf("%s is not set; run under scripts/with-postgres.sh to test PostgreSQL", EnvDSN)
	}
	return base
}

// uniqueName is prefix with a random suffix.
func uniqueName(t testing.TB, prefix string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return prefix + "_" + hex.EncodeToString(b[:])
}

// TemporalDatabase names a database for a Temporal server of this test
// alone (the server creates it and its NAME_visibility twin) and returns
// its DSN and name; both databases are dropped when the test ends, after
// the clean-ups registered later (the processes using them) have run.
func TemporalDatabase(t testing.TB) (dsn, name string) {
	t.Helper()
	base := serverDSN(t)
	name = uniqueName(t, "temporal")
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open %s: %v", EnvDSN, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, db := range []string{name, name + "_visibility"} {
			if _, err := admin.ExecContext(ctx, `DROP DATABASE IF EXISTS "`+db+`" WITH (FORCE)`); err != nil {
				t.Errorf("drop %s: %v", db, err)
			}
		}
		_ = admin.Close()
	})
	return Database(t, name), name
}

// Database is the test server's DSN with its database replaced by db (and
// no search_path).
func Database(t testing.TB, db string) string {
	t.Helper()
	u, err := url.Parse(serverDSN(t))
	if err != nil {
		t.Fatalf("parse %s: %v", EnvDSN, err)
	}
	u.Path = "/" + db
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()
	return u.String()
}
