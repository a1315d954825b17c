//go:build linux

package tools

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// cgroupUnusable is set once creating a command cgroup failed: the worker's
// cgroup is not delegated to it, so every command falls back to the process
// scan without trying again.
var cgroupUnusable atomic.Bool

// cgroupPrefix starts the name of every command cgroup, followed by the
// worker's pid and the command's id.
const cgroupPrefix = "talaria-cmd-"

// sweepOnce guards sweepStaleCgroups.
var sweepOnce sync.Once

// sweepStaleCgroups kills and removes the command cgroups a worker that is
// gone left behind (it crashed while a command ran). Cgroups of live
// workers sharing the parent are left alone.
func sweepStaleCgroups(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, ok := cgroupOwner(e.Name())
		if !ok || !e.IsDir() || pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		c := &cgroup{dir: filepath.Join(parent, e.Name()), fd: -1}
		c.kill()
		c.remove()
	}
}

// cgroupOwner reads the worker pid from a command cgroup's name.
func cgroupOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, cgroupPrefix)
	if !ok {
		return 0, false
	}
	pidText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	return pid, err == nil && pid > 0
}

// cgroup is a cgroup v2 created for one command, below the worker's own.
// The command is cloned straight into it, so every process it ever starts
// is in it until killed, whatever session or parent it takes.
type cgroup struct {
	dir string
	fd  int // an O_PATH-like descriptor of dir, for clone's CLONE_INTO_CGROUP
}

// newCgroup creates the command's cgroup; nil when cgroup v2 is missing or
// not writable here.
func newCgroup(id string) *cgroup {
	if cgroupUnusable.Load() {
		return nil
	}
	parent, err := ownCgroupDir()
	if err != nil {
		cgroupUnusable.Store(true)
		return nil
	}
	sweepOnce.Do(func() { sweepStaleCgroups(parent) })
	dir := filepath.Join(parent, cgroupPrefix+strconv.Itoa(os.Getpid())+"-"+id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		cgroupUnusable.Store(true)
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
		_ = os.Remove(dir)
		cgroupUnusable.Store(true)
		return nil
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		cgroupUnusable.Store(true)
		return nil
	}
	return &cgroup{dir: dir, fd: fd}
}

// ownCgroupDir is the directory of this process's cgroup v2.
func ownCgroupDir() (string, error) {
	mount, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("read own cgroup: %w", err)
	}
	rel, ok := unifiedCgroupPath(data)
	if !ok {
		return "", errors.New("no cgroup v2 membership")
	}
	return filepath.Join(mount, rel), nil
}

// unifiedCgroupPath extracts the cgroup v2 path ("0::/path") from the text
// of /proc/<pid>/cgroup.
func unifiedCgroupPath(data []byte) (string, bool) {
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok && strings.HasPrefix(rest, "/") {
			return rest, true
		}
	}
	return "", false
}

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted.
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("read mounts: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if mp, ok := cgroup2MountPoint(sc.Text()); ok {
			return mp, nil
		}
	}
	return "", errors.New("cgroup v2 is not mounted")
}

// cgroup2MountPoint returns the mount point of a mountinfo line when it
// mounts the root of a cgroup2 file system.
func cgroup2MountPoint(line string) (string, bool) {
	pre, post, ok := strings.Cut(line, " - ")
	if !ok {
		return "", false
	}
	fields, postFields := strings.Fields(pre), strings.Fields(post)
	if len(fields) < 5 || len(postFields) < 1 || postFields[0] != "cgroup2" || fields[3] != "/" {
		return "", false
	}
	return fields[4], true
}

// attach makes the command start inside the cgroup.
func (c *cgroup) attach(attr *syscall.SysProcAttr) {
	attr.UseCgroupFD = true
	attr.CgroupFD = c.fd
}

// kill kills every process in the cgroup and waits, briefly, until it is
// empty.
func (c *cgroup) kill() {
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		// Kernels before 5.14 have no cgroup.kill: signal the members.
		for range 10 {
			pids := c.pids()
			if len(pids) == 0 {
				break
			}
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	deadline := time.Now().Add(terminateGrace)
	for c.populated() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// pids lists the processes in the cgroup.
func (c *cgroup) pids() []int {
	data, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// populated reports whether any live process is left in the cgroup.
func (c *cgroup) populated() bool {
	data, err := os.ReadFile(filepath.Join(c.dir, "cgroup.events"))
	if err != nil {
		return len(c.pids()) > 0
	}
	return bytes.Contains(data, []byte("populated 1"))
}

// remove deletes the emptied cgroup.
func (c *cgroup) remove() {
	if c.fd >= 0 {
		_ = syscall.Close(c.fd)
	}
	for range 50 {
		if err := os.Remove(c.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
