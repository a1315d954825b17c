//go:build linux

package tools

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// processGroupAttr puts the command in its own process group, so the whole
// group can be signalled, and kills the shell if the worker dies.
func processGroupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// groupHasLiveMember scans /proc for a process of the group that is not a
// zombie.
func groupHasLiveMember(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell; assume alive so the caller escalates
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		state, pgrp, ok := parseProcStat(stat)
		if ok && pgrp == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// parseProcStat extracts the state and process group from /proc/<pid>/stat:
// "pid (comm) state ppid pgrp ...". comm may contain spaces and parentheses,
// so parsing starts after the last ')'.
func parseProcStat(stat []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err := strconv.Atoi(string(fields[2]))
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pgrp, true
}

// openedPath is the path of the file f really refers to, as the kernel
// tells it.
func openedPath(f *os.File) (string, bool) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	return p, err == nil && filepath.IsAbs(p)
}
