package prompt

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestBuildDoesNotBlockOnAFIFO: a FIFO in place of a home prompt file (a
// memory file, SOUL.md) is unreadable at once, as a directory is, instead
// of waiting for a writer: Build skips it and lists it in Unread. (More
// cases: TestBuildSkipsUnreadableHomeFile and
// TestBuildSkipsUnreadableContextFile.)
func TestBuildDoesNotBlockOnAFIFO(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"home/memories/MEMORY.md", "home/SOUL.md"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeFiles(t, root, map[string]string{"work/": "", "home/memories/": ""})
			if err := syscall.Mkfifo(filepath.Join(root, filepath.FromSlash(name)), 0o644); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			var unread []Unread
			go func() {
				p, err := Build(Inputs{Home: filepath.Join(root, "home"), Workdir: filepath.Join(root, "work"), Now: fixedNow,
					Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				unread = p.Unread
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Build = %v, want the FIFO skipped", err)
				}
				if len(unread) != 1 || !errors.Is(unread[0].Err, ErrUnreadable) {
					t.Fatalf("Unread = %+v, want the FIFO as unreadable", unread)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Build blocked on a FIFO")
			}
		})
	}
	if _, err := readRegular(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want not exist", err)
	}
}
