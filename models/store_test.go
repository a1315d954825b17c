package models

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// postgresDSNEnv names the variable holding the PostgreSQL server the tests
// use; scripts/with-postgres.sh sets it.
const postgresDSNEnv = "TALARIA_TEST_POSTGRES_DSN"

func TestMain(m *testing.M) {
	if os.Getenv(helperProcessEnv) != "" {
		os.Exit(runHelperProcess())
	}
	goleak.VerifyTestMain(m)
}

// eachDB runs fn once per database as subtests "sqlite" and "postgres", each
// given the DSN of a fresh, empty database of its own.
func eachDB(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		fn(t, filepath.Join(t.TempDir(), "talaria.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, postgresTestDSN(t))
	})
}

// postgresTestDSN creates a schema for this test alone in the server named
// by TALARIA_TEST_POSTGRES_DSN and returns a DSN whose search_path selects
// it. The schema is dropped when the test ends. Without the variable the
// test is skipped, or fails when CI=true.
func postgresTestDSN(t *testing.T) string {
	t.Helper()
	base := os.Getenv(postgresDSNEnv)
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set; CI must run the PostgreSQL tests (use scripts/with-postgres.sh)", postgresDSNEnv)
		}
		t.Skipf("%s is not set; run under scripts/with-postgres.sh to test PostgreSQL", postgresDSNEnv)
	}

	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := "test_" + hex.EncodeToString(b[:])

	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open %s: %v", postgresDSNEnv, err)
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
		t.Fatalf("parse %s: %v", postgresDSNEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// openStore opens dsn and closes the Store when the test ends.
func openStore(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// userMessage builds a user message of a session under an idempotency key.
func userMessage(sessionID, key, content string) Message {
	return Message{SessionID: sessionID, TurnID: sessionID + "/turn", IdemKey: key, Role: "user", Content: content}
}

func messageIDs(msgs []Message) []int64 {
	ids := make([]int64, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	return ids
}

func parseQuery(t *testing.T, rawQuery string) url.Values {
	t.Helper()
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		t.Fatalf("parse query %q: %v", rawQuery, err)
	}
	return q
}
