//go:build !linux

package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"
)

// Check says whether commands can be sandboxed with s: off Linux, only
// ModeOff can.
func Check(s Settings) error {
	s, err := s.Normalized()
	if err != nil {
		return err
	}
	if s.Mode == ModeOff {
		return nil
	}
	return fmt.Errorf("%w: the sandbox needs Linux (this is %s); set sandbox.mode: off to run commands unconfined", ErrUnavailable, runtime.GOOS)
}

// Wrap leaves cmd as it is with ModeOff and fails otherwise.
func Wrap(cmd *exec.Cmd, c Command) error { return Check(c.Settings) }

// Start starts cmd.
func Start(cmd *exec.Cmd, s Settings) (func() error, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd.Wait, nil
}

// SealInherited does nothing off Linux, where no command is sandboxed.
func SealInherited() {}
