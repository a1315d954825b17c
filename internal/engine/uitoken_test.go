package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/talaria-agent/talaria/internal/embedded"
)

// TestUITokenPrivateAndStable: the Web UI token is made once, readable by
// its owner only, kept across calls, and replaced when the file holds
// something too short to be one.
func TestUITokenPrivateAndStable(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	tok, err := UIToken(home)
	if err != nil {
		t.Fatal(err)
	}
	if len(tok) < embedded.MinUITokenLen {
		t.Fatalf("token %q is too short", tok)
	}
	info, err := os.Stat(UITokenPath(home))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.Stat(filepath.Dir(UITokenPath(home)))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 || dir.Mode().Perm() != 0o700 {
		t.Fatalf("token file %v in directory %v, want 0600 in 0700", info.Mode().Perm(), dir.Mode().Perm())
	}
	again, err := UIToken(home)
	if err != nil || again != tok {
		t.Fatalf("second call = %q, %v; want the same token", again, err)
	}
	if err := os.WriteFile(UITokenPath(home), []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh, err := UIToken(home)
	if err != nil || fresh == tok || len(fresh) < embedded.MinUITokenLen {
		t.Fatalf("after a short file: %q, %v; want a new token", fresh, err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(UITokenPath(home)), ".*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}
