package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

func newCompactCommand() *cobra.Command {
	var model string
	return controlCommand("compact SESSION", "Compact a session's conversation now, between turns",
		`compact replaces the middle of the session's conversation with a summary, as a
turn does when the context passes compression.threshold: the first and last
messages stay verbatim, and the conversation goes on in a child session
(SESSION~N) that the next turn uses. It waits for the compaction and says how
large the context was and is. Exit status 1 while a turn runs or messages wait
(stop it, or compact when it is done), or when the session has no conversation.`, 1,
		func(c *cobra.Command) {
			c.Flags().StringVarP(&model, "model", "m", "", "model that writes the summary (default: serve's)")
		},
		func(cmd *cobra.Command, cfg config.Config, rt *talaria.Runtime, args []string) error {
			workdir, err := os.Getwd()
			if err != nil {
				return usagef("cannot read the working directory: %v", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "compacting session %s…\n", args[0])
			res, err := rt.Compact(cmd.Context(), args[0], talaria.WithModel(talaria.TurnTemplate(cfg, workdir), model))
			switch {
			case errors.Is(err, talaria.ErrTurnRunning):
				return &exitError{code: exitFailure, err: fmt.Errorf("session %s is busy: a turn is running or messages wait", args[0])}
			case errors.Is(err, talaria.ErrNoConversation):
				return &exitError{code: exitFailure, err: fmt.Errorf("session %s has no conversation", args[0])}
			case err != nil:
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), talaria.CompactionReport(res, nil))
			if res.Compacted {
				fmt.Fprintf(cmd.OutOrStdout(), "the conversation goes on in session %s\n", res.SessionID)
			}
			return nil
		})
}
