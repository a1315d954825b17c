package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria"
)

func newACPCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "acp",
		Short: "Serve an editor over the Agent Client Protocol (JSON-RPC on stdin/stdout)",
		Long: `acp makes Talaria an Agent Client Protocol agent for editors (Zed, JetBrains
IDEs, Neovim and Emacs plugins, any ACP client): the editor starts
'talaria acp' and speaks JSON-RPC on its standard input and output. Logs go to
standard error; nothing else is written to standard output.

A session made in the editor is a Talaria session: 'talaria sessions list'
shows it and any door can continue it. Its turns run in the editor's working
directory (session/new's cwd). A turn belongs to Talaria, not to the editor:
closing the editor, or killing this process, leaves it running, and
session/load in a new 'talaria acp' replays the session and follows a turn
still running. session/cancel stops the editor's own prompt: its turn, as
'talaria stop' does, or, while it waits behind another door's turn, the prompt
itself (it never runs; the other turn goes on).
A dangerous command asks the editor for permission (allow once, allow always,
reject).

If a 'talaria serve' runs for the same TALARIA_HOME, acp is its client;
otherwise acp starts the embedded Temporal server and a worker for its own
lifetime (and a turn then goes on at the next start).

In Zed's settings.json:

  "agent_servers": { "Talaria": { "command": "talaria", "args": ["acp"] } }`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			logger := newLogger(cfg.LogLevel)
			rt, release, err := openRuntime(ctx, cfg, logger)
			if err != nil {
				return err
			}
			defer release()
			talaria.NewACPAgent(rt, cfg, currentVersion().Version, newSessionID, logger).Serve(ctx, os.Stdout, os.Stdin)
			return nil
		},
	}
}
