package engine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/models"
)

// TestDeleteSessionRemovesItsKeptOutputs: deleting a session from a real
// SQLite store removes its directory of kept outputs and no other; a
// session that is not there removes nothing.
func TestDeleteSessionRemovesItsKeptOutputs(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	st, err := models.Open(t.Context(), filepath.Join(home, "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range []string{"gone", "stays"} {
		if _, err := st.EnsureSession(t.Context(), id, "m"); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(OutputsDir(home), id), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(OutputsDir(home), id, "output-1.txt"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := DeleteSession(t.Context(), st, home, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(OutputsDir(home), "gone")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the deleted session's outputs stay: %v", err)
	}
	if err := DeleteSession(t.Context(), st, home, "nobody"); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("deleting a missing session: %v", err)
	}
	if err := DeleteSession(t.Context(), st, home, "stays/../stays"); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("deleting a path-like id: %v", err)
	}
	if _, err := os.Stat(filepath.Join(OutputsDir(home), "stays", "output-1.txt")); err != nil {
		t.Fatalf("another session's outputs are gone: %v", err)
	}
}

// TestPruneOutputsAtStart removes a session's directory unchanged for
// longer than the retention and keeps a recent one.
func TestPruneOutputsAtStart(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	old, recent := filepath.Join(OutputsDir(home), "old"), filepath.Join(OutputsDir(home), "recent")
	for _, d := range []string{old, recent} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "output-1.txt"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	then := time.Now().Add(-31 * 24 * time.Hour)
	for _, p := range []string{filepath.Join(old, "output-1.txt"), old} {
		if err := os.Chtimes(p, then, then); err != nil {
			t.Fatal(err)
		}
	}
	PruneOutputs(home, time.Now(), nil)
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the old directory stays: %v", err)
	}
	if _, err := os.Stat(recent); err != nil {
		t.Fatalf("the recent directory is gone: %v", err)
	}
	PruneOutputs(filepath.Join(home, "missing"), time.Now(), nil) // no outputs directory: nothing to do
}

// TestKeptOutputsBelongToTheLineage: a session made by a compaction keeps
// its outputs with its parent's (the lineage's directory), and deleting one
// session of the lineage keeps them while another is left.
func TestKeptOutputsBelongToTheLineage(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	st, err := models.Open(t.Context(), filepath.Join(home, "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.EnsureSession(t.Context(), "root", "m"); err != nil {
		t.Fatal(err)
	}
	child, err := st.CompactSession(t.Context(), "root", "system", nil)
	if err != nil {
		t.Fatal(err)
	}
	if child.LineageID != "root" {
		t.Fatalf("child %s has lineage %q", child.ID, child.LineageID)
	}
	kept := filepath.Join(OutputsDir(home), "root", "output-1.txt")
	if err := os.MkdirAll(filepath.Dir(kept), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kept, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := DeleteSession(t.Context(), st, home, "root"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("the lineage's outputs went with one of its sessions: %v", err)
	}
	if err := DeleteSession(t.Context(), st, home, child.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(kept)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the last session of the lineage is gone, its outputs stay: %v", err)
	}
}
