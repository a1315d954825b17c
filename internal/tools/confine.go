//go:build linux

package tools

import (
	"log/slog"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// markerVar is set in every terminal command's environment to a value
// unique to the command, so that its processes can be found however they
// detach.
const markerVar = "TALARIA_CMD_ID"

// trackEvery is how often the process tree is scanned while a command runs
// without a cgroup, to learn its descendants before they could reparent.
const trackEvery = 200 * time.Millisecond

// confinement keeps track of every process a command starts and kills them
// all when the command ends: by cgroup where one can be created, and by
// scanning processes (parent chains, process group, environment marker)
// in any case.
type confinement struct {
	id     string
	marker string
	cg     *cgroup
	mu     sync.Mutex
	tree   *processTree
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

// hideOnce guards HideWorkerEnvironment.
var hideOnce sync.Once

// HideWorkerEnvironment makes this process undumpable: the worker's
// environment holds Talaria's own keys, and an undumpable process's
// /proc/<pid>/environ (and mem) can no longer be read by other processes of
// the same user, such as the commands it runs. A command running as root
// still can: run the worker as an ordinary user. It is idempotent; call it
// when the worker starts. The first terminal command or script calls it
// too, in case nothing did.
func HideWorkerEnvironment() {
	hideOnce.Do(func() {
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); errno != 0 {
			slog.Warn("terminal: cannot hide the worker's environment from commands", "err", errno)
		}
	})
}

// newConfinement prepares the confinement of one command.
func newConfinement() *confinement {
	HideWorkerEnvironment()
	id := randomHex(12)
	return &confinement{id: id, marker: markerVar + "=" + id, cg: newCgroup(id)}
}

// prepare sets up cmd (already given its environment) to be confined.
func (c *confinement) prepare(cmd *exec.Cmd) {
	cmd.Env = append(cmd.Env, c.marker)
	if c.cg != nil {
		c.cg.attach(cmd.SysProcAttr)
	}
}

// inCgroup reports whether the command will start in a cgroup.
func (c *confinement) inCgroup() bool { return c.cg != nil }

// withoutCgroup drops the cgroup after a start that failed with it.
func (c *confinement) withoutCgroup() {
	if c.cg != nil {
		c.cg.remove()
		c.cg = nil
	}
}

// started begins tracking the command whose shell is pgid.
func (c *confinement) started(pgid int) {
	c.tree = newProcessTree(c.marker, pgid)
	c.stop, c.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(c.done)
		if c.cg != nil {
			return // the cgroup holds them all
		}
		tick := time.NewTicker(trackEvery)
		defer tick.Stop()
		for {
			c.mu.Lock()
			c.tree.scan(readProcs())
			c.mu.Unlock()
			select {
			case <-c.stop:
				return
			case <-tick.C:
			}
		}
	}()
}

// release kills every process the command started that is still running
// and removes the cgroup. Only the first call does anything.
func (c *confinement) release() { c.once.Do(c.kill) }

func (c *confinement) kill() {
	if c.stop != nil {
		close(c.stop)
		<-c.done
	}
	if c.cg != nil {
		c.cg.kill()
		defer c.cg.remove()
	}
	if c.tree != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		killTree(c.tree)
	}
}
