//go:build linux

package tools

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"syscall"
)

// procKey names one process for its whole life: a pid with its start time,
// so a reused pid is never mistaken for it.
type procKey struct {
	pid   int
	start uint64
}

// procInfo is what a scan reads of one process.
type procInfo struct {
	procKey
	ppid, pgrp int
	state      byte
}

// alive reports whether the process still runs (zombies do not).
func (p procInfo) alive() bool { return p.state != 'Z' && p.state != 'X' }

// readProcs reads every process's stat line.
func readProcs() []procInfo {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]procInfo, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		if p, ok := parseProcInfo(pid, stat); ok {
			out = append(out, p)
		}
	}
	// Parents start before their children: one pass in start order follows
	// whole chains.
	slices.SortFunc(out, func(a, b procInfo) int {
		if a.start != b.start {
			return compareUint(a.start, b.start)
		}
		return a.pid - b.pid
	})
	return out
}

func compareUint(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}

// parseProcInfo parses /proc/<pid>/stat: "pid (comm) state ppid pgrp
// session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime
// cstime priority nice threads itrealvalue starttime ...". comm may hold
// spaces and parentheses, so fields are counted after the last ')'.
func parseProcInfo(pid int, stat []byte) (procInfo, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procInfo{}, false
	}
	return procInfo{procKey: procKey{pid: pid, start: start}, ppid: ppid, pgrp: pgrp, state: f[0][0]}, true
}

// hasEnvEntry reports whether the process's environment holds entry
// ("NAME=value") exactly. Unreadable environments (other users, zombies)
// hold nothing.
func hasEnvEntry(pid int, entry string) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(data, []byte{0}) {
		if string(kv) == entry {
			return true
		}
	}
	return false
}

// processTree is the set of processes one command started, as far as scans
// can tell: its shell, anything descending from a known member, anything in
// its process group, and anything carrying its marker in the environment
// (which survives setsid, double forks and reparenting to init).
type processTree struct {
	marker  string // "TALARIA_CMD_ID=<id>"
	pgid    int
	members map[procKey]bool
	checked map[procKey]bool // processes whose environment was read
}

func newProcessTree(marker string, pgid int) *processTree {
	return &processTree{marker: marker, pgid: pgid, members: map[procKey]bool{}, checked: map[procKey]bool{}}
}

// scan adds the members found now and returns the live ones.
func (t *processTree) scan(procs []procInfo) []procInfo {
	livePids := map[int]procKey{}
	var live []procInfo
	for _, p := range procs {
		if p.pid == os.Getpid() {
			continue
		}
		member := t.members[p.procKey] || p.pgrp == t.pgid && t.pgid > 0
		if parent, ok := livePids[p.ppid]; ok && t.members[parent] {
			member = true
		}
		if !member && !t.checked[p.procKey] {
			t.checked[p.procKey] = true
			member = hasEnvEntry(p.pid, t.marker)
		}
		livePids[p.pid] = p.procKey
		if !member {
			continue
		}
		t.members[p.procKey] = true
		if p.alive() {
			live = append(live, p)
		}
	}
	return live
}

// killTree stops every live member, scanning again until no new one
// appears (a stopped process cannot fork), then kills them all.
func killTree(t *processTree) {
	stopped := map[procKey]bool{}
	for range 20 {
		fresh := 0
		for _, p := range t.scan(readProcs()) {
			if !stopped[p.procKey] {
				stopped[p.procKey] = true
				fresh++
				_ = syscall.Kill(p.pid, syscall.SIGSTOP)
			}
		}
		if fresh == 0 {
			break
		}
	}
	for k := range stopped {
		_ = syscall.Kill(k.pid, syscall.SIGKILL)
	}
}
