package activities

import (
	"fmt"

	"github.com/talaria-agent/talaria/internal/approval"
	"github.com/talaria-agent/talaria/internal/sandbox"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// allowedTool is the turn's tool list as a test (nil: every tool). Pure.
func allowedTool(allow []string) func(string) bool {
	if len(allow) == 0 {
		return nil
	}
	return func(name string) bool { return tools.Allows(allow, name) }
}

// commandGate decides the terminal commands an execute_code program runs:
// no person sees them, so a safe command runs, a blocked one never does,
// and a dangerous one runs only when both the turn's mode and this
// worker's policy are off (approvals without asking). The refusal tells
// the model what to do instead.
func (a *Activities) commandGate(turnMode string) func(command, workdir string) error {
	unattended := turnMode == "off" && a.approvalPolicy() == "off"
	where := a.commandsRun()
	return func(command, workdir string) error {
		risk := approval.AssessIn(tools.TerminalAssessText(command, workdir), where)
		switch {
		case risk.Risk == turnapi.RiskBlocked:
			return fmt.Errorf("refused: %s; this command is never run", risk.Reason)
		case risk.Risk == turnapi.RiskDangerous && !unattended:
			return fmt.Errorf("refused: %s needs a person's approval, which a program cannot ask for; call the terminal tool with this command instead", risk.Reason)
		}
		return nil
	}
}

// commandsRun is where this worker runs the model's commands, for their
// assessment: in the configured sandbox, or unconfined (sandbox.mode: off).
func (a *Activities) commandsRun() approval.Where {
	s, err := a.toolPolicy().Sandbox.Normalized()
	if err != nil || s.Mode == sandbox.ModeOff {
		return approval.Where{}
	}
	return approval.Where{Sandboxed: true, Writable: s.Mode == sandbox.ModeWorkspaceWrite, Network: s.Network == sandbox.NetworkOn}
}
