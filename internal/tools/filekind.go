package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/talaria-agent/talaria/internal/regularfile"
)

// fileKind names the type of a file that is not a regular file, for the
// one-line refusal the model reads.
func fileKind(mode fs.FileMode) string { return regularfile.Kind(mode) }

// notRegular describes why a file of this mode is refused by tool, or
// returns "" for a regular file. Pure.
func notRegular(tool string, mode fs.FileMode) string {
	if mode.IsRegular() {
		return ""
	}
	if mode.IsDir() {
		return "is a directory, not a file (use the terminal tool, e.g. ls, to list it)"
	}
	return fmt.Sprintf("is %s, not a regular file; %s only handles regular files", fileKind(mode), tool)
}

// checkOpenedRegular refuses an opened file that is not a regular file. It
// asks the opened descriptor (fstat), not the path, so a file swapped in
// after a check by name cannot slip through; the file is opened with
// O_NONBLOCK, so opening a FIFO or a device never waited for a peer.
func checkOpenedRegular(tool, name string, f *os.File) error {
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s %s: %w", tool, name, err)
	}
	if why := notRegular(tool, info.Mode()); why != "" {
		return fmt.Errorf("%s %s: %s", tool, name, why)
	}
	return nil
}

// explainOpenError turns a failed open of a special file into the refusal
// that names it: opening a socket fails with ENXIO ("no such device or
// address"), which says nothing useful to the model.
func explainOpenError(tool string, p checkedPath, err error) error {
	if !errors.Is(err, syscall.ENXIO) && !errors.Is(err, syscall.ENODEV) {
		return err
	}
	info, serr := os.Lstat(p.Real)
	if serr != nil {
		return err
	}
	if why := notRegular(tool, info.Mode()); why != "" {
		return fmt.Errorf("%s %s: %s", tool, p.Abs, why)
	}
	return err
}

// readRegularFile is os.ReadFile for a file a tool keeps itself (a memory
// file): anything but a regular file is refused without waiting, so a FIFO
// put in its place cannot block the call. A missing file is an error
// matching fs.ErrNotExist, as with os.ReadFile.
func readRegularFile(path string) ([]byte, error) { return regularfile.Read(path) }
