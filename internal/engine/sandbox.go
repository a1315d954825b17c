package engine

import (
	"errors"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/sandbox"
)

// SandboxLine says in one line which sandbox the model's commands run in
// under cfg, or why none can be made here (and that they are refused
// until one can or sandbox.mode is off). ok is false in that case.
func SandboxLine(cfg config.Config) (line string, ok bool) {
	s := cfg.SandboxSettings()
	if err := sandbox.Check(s); err != nil {
		if errors.Is(err, sandbox.ErrUnavailable) {
			return "commands are refused: " + err.Error(), false
		}
		return err.Error(), false
	}
	return s.Describe(), true
}
