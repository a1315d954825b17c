package models

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCheckNoticesRemovedFile: removing the SQLite file under an open Store
// is reported as ErrStoreGone by Check and by every later write, and the
// file is not created again.
func TestCheckNoticesRemovedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	s := openStore(t, path)
	ctx := t.Context()
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check on a fresh store = %v", err)
	}
	if _, err := s.AppendMessages(ctx, []Message{userMessage("s", "k1", "before")}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	if err := s.Check(ctx); !errors.Is(err, ErrStoreGone) {
		t.Fatalf("Check after removal = %v, want ErrStoreGone", err)
	}
	if _, err := s.AppendMessages(ctx, []Message{userMessage("s", "k2", "after")}); !errors.Is(err, ErrStoreGone) {
		t.Errorf("AppendMessages after removal = %v, want ErrStoreGone", err)
	}
	end := time.Now()
	err := s.UpsertTurn(ctx, Turn{ID: "s/1", SessionID: "s", Status: "completed", StartedAt: end, EndedAt: &end})
	if !errors.Is(err, ErrStoreGone) {
		t.Errorf("UpsertTurn after removal = %v, want ErrStoreGone", err)
	}
	if _, err := s.NextTurn(ctx, "s", "m", ""); !errors.Is(err, ErrStoreGone) {
		t.Errorf("NextTurn after removal = %v, want ErrStoreGone", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the removed store was created again: stat = %v", err)
	}
}

// TestCheckNoticesReplacedFile: another file put at the store's path is
// not the store.
func TestCheckNoticesReplacedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "talaria.db")
	s := openStore(t, path)
	other := filepath.Join(dir, "other.db")
	o := openStore(t, other)
	if _, err := o.NextTurn(t.Context(), "stranger", "m", ""); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(t.Context()); !errors.Is(err, ErrStoreGone) {
		t.Fatalf("Check after replacement = %v, want ErrStoreGone", err)
	}
	end := time.Now()
	err := s.UpsertTurn(t.Context(), Turn{ID: "s/1", SessionID: "s", Status: "completed", StartedAt: end, EndedAt: &end})
	if !errors.Is(err, ErrStoreGone) {
		t.Errorf("UpsertTurn after replacement = %v, want ErrStoreGone", err)
	}
}

// TestCheckAfterChmod: changing the file's mode keeps its identity; when
// it makes the file unusable (for a user other than root) the store is
// unreachable, not gone.
func TestCheckAfterChmod(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	s := openStore(t, path)
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(path, 0o600) })
	err := s.Check(t.Context())
	if errors.Is(err, ErrStoreGone) {
		t.Fatalf("Check after chmod = %v: the file is the same one", err)
	}
	if os.Geteuid() != 0 && !errors.Is(err, ErrUnreachable) {
		t.Errorf("Check on an unreadable file = %v, want ErrUnreachable", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(t.Context()); err != nil {
		t.Errorf("Check after the mode is restored = %v", err)
	}
}

// TestPoolDoesNotCreateFile: the connections of a Store open the file
// without creating it.
func TestPoolDoesNotCreateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	d, err := newSQLiteDialect(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open(sqliteDriverName, d.poolDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.PingContext(t.Context()); err == nil {
		t.Error("a connection opened a missing file")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a connection created the file: stat = %v", err)
	}
}

func TestOpenExistingRefusesMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	if _, err := OpenExisting(t.Context(), path); !errors.Is(err, ErrStoreGone) {
		t.Fatalf("OpenExisting(missing) = %v, want ErrStoreGone", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenExisting created the file: stat = %v", err)
	}
	openStore(t, path).Close()
	s, err := OpenExisting(t.Context(), path)
	if err != nil {
		t.Fatalf("OpenExisting(existing) = %v", err)
	}
	_ = s.Close()
}

func TestPoolDSN(t *testing.T) {
	tests := []struct{ dsn, want string }{
		{"/data/talaria.db", "file:/data/talaria.db?"},
		{"/data/a b#%.db", "file:/data/a%20b%23%25.db?"},
		{"file:rel.db?mode=rwc", "file:rel.db?"},
		{":memory:", ":memory:?"},
	}
	for _, tt := range tests {
		d, err := newSQLiteDialect(tt.dsn)
		if err != nil {
			t.Fatal(err)
		}
		got := d.poolDSN()
		if len(got) < len(tt.want) || got[:len(tt.want)] != tt.want {
			t.Errorf("poolDSN(%q) = %q, want prefix %q", tt.dsn, got, tt.want)
		}
		q := parseQuery(t, got[len(tt.want):])
		wantMode := "rw"
		switch tt.dsn {
		case "file:rel.db?mode=rwc":
			wantMode = "rwc"
		case ":memory:":
			wantMode = ""
		}
		if q.Get("mode") != wantMode {
			t.Errorf("poolDSN(%q) mode = %q, want %q", tt.dsn, q.Get("mode"), wantMode)
		}
	}
}

func TestCheckPostgres(t *testing.T) {
	s := openStore(t, postgresTestDSN(t))
	if err := s.Check(t.Context()); err != nil {
		t.Fatalf("Check = %v", err)
	}
	if s.File() != "" {
		t.Errorf("File() = %q on PostgreSQL", s.File())
	}
}

// TestOpenPathNeedingURIEscapes: the pool's "file:" URI names the same file
// when the path holds characters a URI escapes.
func TestOpenPathNeedingURIEscapes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a #%3F b")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "talaria.db")
	s := openStore(t, path)
	if _, err := s.NextTurn(t.Context(), "s", "m", ""); err != nil {
		t.Fatalf("NextTurn: %v", err)
	}
	if err := s.Check(t.Context()); err != nil {
		t.Errorf("Check = %v", err)
	}
	entries, err := os.ReadDir(filepath.Dir(dir))
	if err != nil || len(entries) != 1 {
		t.Errorf("files beside the store's directory = %v, %v; want only it", entries, err)
	}
}
