package models

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOpenCreatesPrivateFiles: a new SQLite store and its -wal and -shm
// files are readable by their owner only.
func TestOpenCreatesPrivateFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != 0o600 {
			t.Errorf("%s has mode %v, want 0600", p, got)
		}
	}
}

func TestSQLiteFile(t *testing.T) {
	cases := map[string]string{
		"/var/lib/talaria/talaria.db":       "/var/lib/talaria/talaria.db",
		"sqlite:///tmp/x.db?_pragma=foo(1)": "/tmp/x.db",
		"file:/tmp/y.db?mode=rwc":           "/tmp/y.db",
		":memory:":                          "",
		"file:x?mode=memory":                "",
		"postgres://u@localhost/talaria":    "",
		"":                                  "",
	}
	for dsn, want := range cases {
		if got := SQLiteFile(dsn); got != want {
			t.Errorf("SQLiteFile(%q) = %q, want %q", dsn, got, want)
		}
	}
}
