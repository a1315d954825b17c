// Package regularfile reads files that someone else may have replaced by
// something that is not a file: a FIFO with no writer, a device without
// end, a socket, a directory. The open never waits (O_NONBLOCK) and the
// opened descriptor, not the path, is checked, so a file swapped in after
// a check by name cannot slip through.
package regularfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular matches the error of Read for anything but a regular file.
var ErrNotRegular = errors.New("not a regular file")

// Kind names the type of a file that is not a regular file, for a one-line
// refusal ("a named pipe (FIFO)", "a directory", ...). Pure.
func Kind(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode&fs.ModeIrregular != 0:
		return "an irregular file"
	default:
		return "not a regular file"
	}
}

// notRegularError says what path is instead of a regular file.
type notRegularError struct{ path, kind string }

func (e *notRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.path, e.kind)
}

func (e *notRegularError) Is(target error) bool { return target == ErrNotRegular }

// Read is os.ReadFile that refuses, without waiting, anything but a
// regular file: the error names path and its kind and matches
// ErrNotRegular. A missing file matches fs.ErrNotExist, as with
// os.ReadFile.
func Read(path string) ([]byte, error) { return read(path, 0, -1) }

// ErrTooLarge matches the error of ReadAtMost for a file over its limit.
var ErrTooLarge = errors.New("file too large")

// ReadAtMost is Read for a file of at most max bytes (a larger one is
// ErrTooLarge, and not read) that is not a symbolic link (ELOOP).
func ReadAtMost(path string, max int64) ([]byte, error) {
	return read(path, syscall.O_NOFOLLOW, max)
}

func read(path string, flags int, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|flags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &notRegularError{path: path, kind: Kind(info.Mode())}
	}
	if max >= 0 && info.Size() > max {
		return nil, fmt.Errorf("%s: %w (%d bytes, the limit is %d)", path, ErrTooLarge, info.Size(), max)
	}
	if max < 0 {
		return io.ReadAll(f)
	}
	return io.ReadAll(io.LimitReader(f, max))
}
