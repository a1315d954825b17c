package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/textline"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "talaria",
		Short: "A durable AI agent engine: every turn is a Temporal workflow",
		Long: `Talaria runs a tool-calling AI agent whose every turn is a durable Temporal
workflow: a turn survives crashes and restarts and can run for hours.

Quick start:
  talaria serve                      # embedded Temporal + worker + SQLite in $TALARIA_HOME
  talaria model set --base-url http://localhost:11434/v1 --model llama3.1   # the endpoint turns use
  talaria chat -q "list the files"   # one turn (uses the running serve, or embeds its own)

Environment: ` + strings.Join(config.EnvKeys(), ", ") + `, TALARIA_HOME (default ~/.talaria).
The same keys may be set in $TALARIA_HOME/config.yaml.

Exit status: 0 success, 1 the turn did not complete (or the command failed), 2 usage or configuration error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// What the commands print comes partly from elsewhere (a model's
	// answer, a stored message, a job's name): its control characters are
	// printed visible, never as escape sequences the terminal obeys.
	root.SetOut(textline.NewWriter(os.Stdout))
	root.SetErr(textline.NewWriter(os.Stderr))
	setVersion(root)
	registerGlobalFlags(root)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usagef("%s (see '%s --help')", plainFlagError(err.Error()), c.CommandPath())
	})
	root.AddCommand(newServeCommand(), newChatCommand(), newRunCommand(), newSendCommand(), newSteerCommand(),
		newStopCommand(), newCompactCommand(), newStatusCommand(), newApproveCommand(), newDenyCommand(), newAnswerCommand(),
		newWorkerCommand(), newAPICommand(), gatewayCommands(), newTemporalCommand(), newSessionsCommand(), newConfigCommand(), newMemoryCommand(), newSkillsCommand(), newToolsCommand(), newMCPCommand(),
		newCronCommand(), newSchedulerCommand(), newVersionCommand(), newDoctorCommand(), newModelCommand(), newSetupCommand(), newLogsCommand(), newUsageCommand(), newACPCommand())
	// Unknown sub-commands are usage errors too.
	root.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("unknown command %q (see 'talaria --help')", args[0])
		}
		return nil
	}
	root.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	return root
}

// gatewayCommands is talaria gateway and its sub-commands.
func gatewayCommands() *cobra.Command {
	c := newGatewayCommand()
	c.AddCommand(newGatewayPairCommand(), newGatewayStatusCommand())
	return c
}
