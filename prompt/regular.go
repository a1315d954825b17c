package prompt

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// readRegular is os.ReadFile for prompt files, which anyone with access to
// the working directory or the home may replace: the open does not wait
// (O_NONBLOCK) and anything but a regular file (a FIFO, a device, a socket,
// a directory) is an error, so building a prompt never blocks on a file
// that has no end or no writer. A missing file matches fs.ErrNotExist.
func readRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", info.Mode().Type())
	}
	return io.ReadAll(f)
}
