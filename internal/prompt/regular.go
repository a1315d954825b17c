package prompt

import "github.com/talaria-agent/talaria/internal/regularfile"

// readRegular is os.ReadFile for prompt files, which anyone with access to
// the working directory or the home may replace: the open does not wait
// and anything but a regular file (a FIFO, a device, a socket, a
// directory) is an error, so building a prompt never blocks on a file that
// has no end or no writer. A missing file matches fs.ErrNotExist.
func readRegular(path string) ([]byte, error) { return regularfile.Read(path) }
