//go:build unix && !linux

package tools

import "os/exec"

// markerVar is set in every terminal command's environment to a value
// unique to the command.
const markerVar = "TALARIA_CMD_ID"

// confinement without /proc or cgroups: the process group is all there is.
type confinement struct{ marker string }

// HideWorkerEnvironment does nothing here: there is no /proc to read
// another process's environment from. It is idempotent.
func HideWorkerEnvironment() {}

func newConfinement() *confinement {
	return &confinement{marker: markerVar + "=" + randomHex(12)}
}

func (c *confinement) prepare(cmd *exec.Cmd) { cmd.Env = append(cmd.Env, c.marker) }
func (c *confinement) inCgroup() bool        { return false }
func (c *confinement) withoutCgroup()        {}
func (c *confinement) started(int)           {}
func (c *confinement) release()              {}
