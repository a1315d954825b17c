package regularfile

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRead: a regular file is read; a FIFO without a writer, a socket, a
// device and a directory are refused at once, naming their kind; a missing
// file is fs.ErrNotExist.
func TestRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("text"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got, err := Read(file); err != nil || string(got) != "text" {
		t.Fatalf("Read(file) = %q, %v", got, err)
	}
	for _, tc := range []struct{ path, kind string }{
		{fifo, "a named pipe (FIFO)"},
		{dir, "a directory"},
		{"/dev/null", "a character device"},
	} {
		_, err := Read(tc.path)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), tc.kind) {
			t.Errorf("Read(%s) = %v, want %s refused", tc.path, err, tc.kind)
		}
	}
	if _, err := Read(sock); err == nil {
		t.Errorf("Read(socket) succeeded")
	}
	if _, err := Read(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read(missing) = %v, want fs.ErrNotExist", err)
	}
}

func TestKind(t *testing.T) {
	t.Parallel()
	for mode, want := range map[fs.FileMode]string{
		fs.ModeDir: "a directory", fs.ModeNamedPipe: "a named pipe (FIFO)", fs.ModeSocket: "a socket",
		fs.ModeDevice | fs.ModeCharDevice: "a character device", fs.ModeDevice: "a block device",
		fs.ModeSymlink: "a symbolic link", fs.ModeIrregular: "an irregular file", 0: "not a regular file",
	} {
		if got := Kind(mode); got != want {
			t.Errorf("Kind(%v) = %q, want %q", mode, got, want)
		}
	}
}
