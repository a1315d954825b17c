//go:build unix && !linux

package tools

import (
	"os"
	"syscall"
)

// processGroupAttr puts the command in its own process group, so the whole
// group can be signalled.
func processGroupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// groupHasLiveMember cannot tell zombies apart without /proc; kill(-pgid, 0)
// already succeeded, so the group counts as alive.
func groupHasLiveMember(int) bool { return true }

// openedPath cannot tell without /proc.
func openedPath(*os.File) (string, bool) { return "", false }
