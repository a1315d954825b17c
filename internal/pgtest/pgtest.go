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
	base := os.Getenv(EnvDSN)
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set; CI must run the PostgreSQL tests (use scripts/with-postgres.sh)", EnvDSN)
		}
		t.Skipf("%s is not set; run under scripts/with-postgres.sh to test PostgreSQL", EnvDSN)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := prefix + "_" + hex.EncodeToString(b[:])
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
