package sandbox

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// SealInherited marks every descriptor this process was started with,
// beyond standard input, output and error, close-on-exec: a descriptor
// its parent left open (a pipe, a socket, a file) would otherwise reach
// every command it runs, through bubblewrap into the sandbox. Go opens
// its own descriptors close-on-exec; the ones a command is given are
// passed to it explicitly. Call it first thing, before any command runs.
func SealInherited() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	// Before Linux 5.11: one by one.
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}
