package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

// connectClient connects to the Temporal and store that a running serve
// uses (or the external Temporal the configuration names), without a worker.
func connectClient(ctx context.Context, cfg config.Config, logger *slog.Logger) (*talaria.Runtime, error) {
	if !cfg.Temporal.Embedded() {
		rt, err := talaria.Start(ctx, cfg, talaria.Options{Logger: logger})
		if err != nil {
			return nil, usageErr(err)
		}
		return rt, nil
	}
	lock, err := talaria.TryLock(cfg.Home)
	if err == nil {
		lock.Release()
		return nil, usagef("no talaria serve is running for %s: start one with 'talaria serve'", cfg.Home)
	}
	if !errors.Is(err, talaria.ErrLocked) {
		return nil, usageErr(err)
	}
	info, err := waitServeInfo(ctx, cfg.Home)
	if err != nil {
		return nil, usagef("%s is in use by a talaria process that is not 'talaria serve'", cfg.Home)
	}
	if err := checkServeDB(cfg, info); err != nil {
		return nil, err
	}
	rt, err := talaria.Connect(ctx, cfg, info, logger)
	if err != nil {
		return nil, usageErr(err)
	}
	return rt, nil
}

// controlCommand builds a command that talks to a running serve about a
// session; run gets the connected runtime and the positional arguments.
func controlCommand(use, short, long string, nargs int, setup func(*cobra.Command),
	run func(cmd *cobra.Command, cfg config.Config, rt *talaria.Runtime, args []string) error) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != nargs {
				return usagef("%s needs %d argument(s): %s (see '%s --help')", c.Name(), nargs, use, c.CommandPath())
			}
			if !sessionIDPattern.MatchString(args[0]) {
				return usagef("session %q: use 1-128 letters, digits, '.', '_', '~' or '-'", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			rt, err := connectClient(cmd.Context(), cfg, newLogger(cfg.LogLevel))
			if err != nil {
				return err
			}
			defer rt.Close()
			return run(cmd, cfg, rt, args)
		},
	}
	if setup != nil {
		setup(c)
	}
	return c
}

func newSendCommand() *cobra.Command {
	var mode, model string
	return controlCommand("send SESSION TEXT", "Send a message to a session; it runs as a turn",
		`send delivers a message to a session through the running 'talaria serve'. If a
turn of the session is running, --mode decides (default: busy_input_mode from the
configuration, itself "interrupt" by default):
  interrupt  stop the running turn, then run this message
  queue      run it after the running turn and those queued before it
  steer      hand it to the running turn at its next safe point
Messages wait durably: they survive a restart of serve. send returns at once;
watch with 'talaria status SESSION'. When serve's model endpoint does not answer,
send says so in one line on stderr; the message is delivered all the same (its
turn retries the model, and fails if the endpoint stays down).`, 2,
		func(c *cobra.Command) {
			c.Flags().StringVar(&mode, "mode", "", "busy-input mode: interrupt, queue or steer")
			c.Flags().StringVarP(&model, "model", "m", "", "model name for the turn")
		},
		func(cmd *cobra.Command, cfg config.Config, rt *talaria.Runtime, args []string) error {
			mode = cmp.Or(mode, cfg.BusyInputMode)
			m, err := talaria.ParseBusyMode(mode)
			if err != nil {
				return usageErr(err)
			}
			return sendMessage(cmd, cfg, rt, args[0], args[1], m, model)
		})
}

func newSteerCommand() *cobra.Command {
	return controlCommand("steer SESSION TEXT", "Redirect a session's running turn without stopping it",
		`steer hands TEXT to the session's running turn at its next safe point: appended,
in a marked out-of-band block, to the next tool result, or as input to the next
model call. If no turn is running, or the turn ends before it could use the text,
the text becomes the session's next message.`, 2, nil,
		func(cmd *cobra.Command, cfg config.Config, rt *talaria.Runtime, args []string) error {
			return sendMessage(cmd, cfg, rt, args[0], args[1], talaria.BusySteer, "")
		})
}

func sendMessage(cmd *cobra.Command, cfg config.Config, rt *talaria.Runtime, session, text string, mode talaria.BusyMode, model string) error {
	if strings.TrimSpace(text) == "" {
		return usagef("the message is empty")
	}
	workdir, err := os.Getwd()
	if err != nil {
		return usagef("cannot read the working directory: %v", err)
	}
	warnServeModel(cmd.ErrOrStderr(), cfg.Home)                        // this shell's endpoint or model is not serve's
	in := talaria.WithModel(talaria.TurnTemplate(cfg, workdir), model) // -m: this turn's model
	in.SessionID, in.UserMessage = session, text
	// The message is durable whatever the endpoint does; whether serve's
	// endpoint answers is looked at meanwhile, and said after.
	warning := make(chan string, 1)
	go func() { warning <- serveEndpointWarning(cmd.Context(), cfg.Home, session) }()
	if err := rt.Send(cmd.Context(), session, talaria.Message{Text: text, Mode: mode, Turn: in}); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "sent to session %s (%s)\n", session, mode)
	if w := <-warning; w != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), w)
	}
	return nil
}

func newStopCommand() *cobra.Command {
	return controlCommand("stop SESSION", "Interrupt a session's running turn",
		`stop interrupts the session's running turn: the model call or tool batch in
flight is cancelled (a running terminal command is killed), calls not yet run are
answered "cancelled", and the turn ends with turn_exit_reason "interrupted".
Exit status 1 when no turn is running.`, 1, nil,
		func(cmd *cobra.Command, _ config.Config, rt *talaria.Runtime, args []string) error {
			id, err := rt.Interrupt(cmd.Context(), args[0], "stopped by the user")
			if errors.Is(err, talaria.ErrNoRunningTurn) || talaria.IsNotFound(err) {
				return &exitError{code: exitFailure, err: fmt.Errorf("session %s has no running turn", args[0])}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "interrupted %s\n", id)
			return nil
		})
}

// waitServeInfo reads serve.json, waiting a little while a serve that holds
// the lock is still starting and has not published it yet.
func waitServeInfo(ctx context.Context, home string) (talaria.ServeInfo, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := talaria.ReadServeInfo(home)
		if err == nil || !errors.Is(err, talaria.ErrNoServe) || time.Now().After(deadline) {
			return info, err
		}
		select {
		case <-ctx.Done():
			return info, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// controlCommandNoSession is like controlCommand for commands whose one
// argument is not a session.
func controlCommandNoSession(use, short string,
	run func(cmd *cobra.Command, cfg config.Config, rt *talaria.Runtime, args []string) error) *cobra.Command {
	c := controlCommand(use, short, "", 1, nil, run)
	c.Args = exactArgs(1, "one argument")
	return c
}
