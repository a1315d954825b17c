package activities

import (
	"path/filepath"
	"testing"

	"github.com/talaria-agent/talaria/models"
)

// TestLineageKeysKeptOutputs: the tool outputs a session keeps are keyed by
// its lineage, so a session made by a compaction writes and reads them
// where its parent did; a session the store does not know keys its own.
func TestLineageKeysKeptOutputs(t *testing.T) {
	ctx := t.Context()
	store, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.EnsureSession(ctx, "root", "m"); err != nil {
		t.Fatal(err)
	}
	child, err := store.CompactSession(ctx, "root", "system", nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &Activities{Store: store}
	for _, tc := range []struct{ session, want string }{
		{"root", "root"},
		{child.ID, "root"},
		{"unknown", "unknown"},
	} {
		if got, _, _ := a.sessionKeys(ctx, tc.session); got != tc.want {
			t.Errorf("sessionKeys(%q) lineage = %q, want %q", tc.session, got, tc.want)
		}
	}
}
