package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/talaria-agent/talaria"

	"github.com/talaria-agent/talaria/internal/textline"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

// pending finds what a session's running turn waits for (or, while it
// delegates, one of its tasks: talaria.Waiting).
func pending(cmd *cobra.Command, rt *talaria.Runtime, session string) (talaria.Progress, error) {
	p, _, err := rt.Waiting(cmd.Context(), session)
	if errors.Is(err, talaria.ErrNoRunningTurn) || talaria.IsNotFound(err) {
		return p, &exitError{code: exitFailure, err: fmt.Errorf("session %s has no running turn", session)}
	}
	return p, err
}

func newApproveCommand() *cobra.Command {
	var session, always bool
	return controlCommand("approve SESSION", "Approve the dangerous command a session's turn waits on",
		`approve lets the command that the session's running turn is waiting on run.
By default it approves this one command; --session approves the same command
(the program and its dangerous arguments, e.g. rm -rf ./build, never another
target) for the rest of the session, --always for every session.
Blocked commands (e.g. rm -rf /) are never run, whatever is approved.
Exit status 1 when nothing waits for an approval.`, 1,
		func(c *cobra.Command) {
			c.Flags().BoolVar(&session, "session", false, "approve the same command for the rest of the session")
			c.Flags().BoolVar(&always, "always", false, "approve the same command in every session")
		},
		func(cmd *cobra.Command, _ config.Config, rt *talaria.Runtime, args []string) error {
			choice := talaria.ChoiceOnce
			switch {
			case session && always:
				return usagef("--session and --always exclude each other")
			case session:
				choice = talaria.ChoiceSession
			case always:
				choice = talaria.ChoiceAlways
			}
			return decide(cmd, rt, args[0], choice)
		})
}

func newDenyCommand() *cobra.Command {
	return controlCommand("deny SESSION", "Refuse the dangerous command a session's turn waits on",
		`deny refuses the command the session's running turn is waiting on; the model is
told it was refused and must not retry it. Exit status 1 when nothing waits.`, 1, nil,
		func(cmd *cobra.Command, _ config.Config, rt *talaria.Runtime, args []string) error {
			return decide(cmd, rt, args[0], talaria.ChoiceDeny)
		})
}

func decide(cmd *cobra.Command, rt *talaria.Runtime, session string, choice talaria.ApprovalChoice) error {
	p, err := pending(cmd, rt, session)
	if err != nil {
		return err
	}
	if p.PendingApproval == nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("no command is waiting for approval in session %s", session)}
	}
	if err := rt.Decide(cmd.Context(), p.TurnID, p.PendingApproval.CallID, choice); err != nil {
		return err
	}
	verb := map[talaria.ApprovalChoice]string{talaria.ChoiceOnce: "approved", talaria.ChoiceSession: "approved for this session",
		talaria.ChoiceAlways: "approved always", talaria.ChoiceDeny: "denied"}[choice]
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", verb, textline.Visible(p.PendingApproval.Command))
	if (choice == talaria.ChoiceSession || choice == talaria.ChoiceAlways) && p.PendingApproval.Pattern != "" {
		fmt.Fprintf(cmd.OutOrStdout(), "  remembered: %s (other commands and targets still ask)\n", textline.Visible(p.PendingApproval.Pattern))
	}
	return nil
}

func newAnswerCommand() *cobra.Command {
	return controlCommand("answer SESSION TEXT", "Answer the question a session's turn asked",
		`answer gives TEXT to the turn that asked the user a question (the clarify tool);
the turn continues with it. The turn waits durably for the answer, for minutes or
days, across restarts. Exit status 1 when no question is pending.`, 2, nil,
		func(cmd *cobra.Command, _ config.Config, rt *talaria.Runtime, args []string) error {
			if strings.TrimSpace(args[1]) == "" {
				return usagef("the answer is empty")
			}
			p, err := pending(cmd, rt, args[0])
			if err != nil {
				return err
			}
			if p.PendingQuestion == nil {
				return &exitError{code: exitFailure, err: fmt.Errorf("no question is waiting for an answer in session %s", args[0])}
			}
			if err := rt.Answer(cmd.Context(), p.TurnID, p.PendingQuestion.CallID, args[1]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "answered: %s\n", p.PendingQuestion.Question)
			return nil
		})
}
