package models

import (
	"github.com/talaria-agent/talaria/internal/pgtest"

	"net/url"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

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

// postgresTestDSN is a PostgreSQL schema of this test's own (pgtest.DSN).
func postgresTestDSN(t *testing.T) string { return pgtest.DSN(t, "test") }

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
