package embedded

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFileModeIsPrivate: in file mode, whatever the umask, the data
// directory is 0700 and the database with its -wal and -shm files 0600.
func TestFileModeIsPrivate(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	dir := filepath.Join(t.TempDir(), "temporal")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{DataDir: dir, TLS: newTestTLS(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	db := filepath.Join(dir, DBFileName)
	want := map[string]os.FileMode{dir: 0o700, db: 0o600, db + "-wal": 0o600, db + "-shm": 0o600}
	for path, mode := range want {
		info, err := os.Stat(path)
		if err != nil {
			t.Error(err)
			continue
		}
		if got := info.Mode().Perm(); got != mode {
			t.Errorf("%s has mode %v, want %v", path, got, mode)
		}
	}
}
