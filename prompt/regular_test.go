package prompt

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestBuildDoesNotBlockOnAFIFO: a FIFO in place of a home prompt file (a
// memory file, SOUL.md) makes Build fail as unreadable at once, as a
// directory does, instead of waiting for a writer. (A FIFO as a project
// context file is skipped: TestBuildSkipsUnreadableContextFile.)
func TestBuildDoesNotBlockOnAFIFO(t *testing.T) {
	for _, name := range []string{"home/memories/MEMORY.md", "home/SOUL.md"} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, map[string]string{"work/": "", "home/memories/": ""})
			if err := syscall.Mkfifo(filepath.Join(root, filepath.FromSlash(name)), 0o644); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := Build(Inputs{Home: filepath.Join(root, "home"), Workdir: filepath.Join(root, "work"), Now: fixedNow})
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, ErrUnreadable) {
					t.Fatalf("err = %v, want ErrUnreadable", err)
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
