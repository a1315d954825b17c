package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/talaria-agent/talaria/config"
)

// exitInterrupted is the exit status of a one-shot chat stopped by Ctrl-C
// (128 + SIGINT, as shells report it).
const exitInterrupted = 130

// oneShot runs the single turn of `chat -q`. It says the session id on
// stderr first; while the turn waits on a person it says what for and how
// to answer, asks inline when stdin is a terminal and otherwise follows
// approvals.noninteractive. Ctrl-C interrupts the turn, waits for it to end
// and exits 130 (a second Ctrl-C quits at once).
func oneShot(cmd *cobra.Command, cfg config.Config, rt *talaria.Runtime, session string, asJSON bool,
	printer *streamPrinter, turn func(string) (talaria.ConversationResult, error), msg string) error {
	ctx := cmd.Context()
	errOut := cmd.ErrOrStderr()
	fmt.Fprintf(errOut, "session: %s\n", session)
	watch := &attendant{rt: rt, session: session, errOut: errOut, hint: true}
	if in := cmd.InOrStdin(); isTerminal(in) {
		watch.lines = readLines(in)
	} else {
		watch.unattended = cfg.Approvals.NonInteractive
	}
	res, interrupted, err := runInterruptible(ctx, rt, session, func() (talaria.ConversationResult, error) {
		return watch.attend(ctx, func() (talaria.ConversationResult, error) { return turn(msg) })
	}, errOut)
	code := exitFailure
	if interrupted {
		code = exitInterrupted
	}
	if err != nil && !interrupted && ctx.Err() != nil {
		// SIGTERM: this client stops waiting; a served turn goes on.
		err = errors.New("stopped waiting for the turn (terminated)")
	}
	if err != nil {
		turnID := cmp.Or(errorTurnID(err.Error()), watch.turnID)
		res = failedResult(session, turnID, oneShotModel(cmd, cfg, rt), err, interrupted)
		if !asJSON {
			// One plain line, also for Ctrl-C pressed twice.
			printOutcome(errOut, res)
			return &exitError{code: code}
		}
	}
	if asJSON {
		if err := writeJSON(cmd.OutOrStdout(), res); err != nil {
			return fmt.Errorf("encode result: %w", err)
		}
	} else {
		printer.finish(res)
	}
	switch {
	case interrupted:
		return &exitError{code: exitInterrupted}
	case !res.Completed:
		return &exitError{code: exitFailure}
	}
	return nil
}

// failedResult is the ConversationResult of a turn that could not be run
// or waited for to its end. Pure.
func failedResult(session, turnID, model string, err error, interrupted bool) talaria.ConversationResult {
	msg := plainError(oneLine(err))
	reason := talaria.StopError
	if interrupted {
		reason = talaria.StopInterrupted
		msg = "interrupted: stopped waiting for the turn (Ctrl-C twice)"
	}
	res := talaria.ConversationResult{Failed: !interrupted, Interrupted: interrupted, TurnExitReason: reason,
		Error: &msg, SessionID: session, TurnID: turnID, Model: model}
	return res
}

// isTerminal reports whether r is a terminal (a person can answer there).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// runInterruptible runs one turn with Ctrl-C wired to interrupt it; a
// second Ctrl-C cancels ctx (the caller exits). interrupted reports
// whether Ctrl-C was pressed.
func runInterruptible(ctx context.Context, rt *talaria.Runtime, session string, run func() (talaria.ConversationResult, error), errOut io.Writer) (res talaria.ConversationResult, interrupted bool, err error) {
	if sigs == nil {
		res, err = run()
		return res, false, err
	}
	var presses atomic.Int32
	done := make(chan struct{})
	restore := sigs.handleInterrupt(func() {
		if presses.Add(1) > 1 {
			sigs.cancel()
			return
		}
		fmt.Fprintln(errOut, "\ninterrupting the turn (Ctrl-C again to quit)...")
		go interruptTurn(ctx, rt, session, done, errOut)
	})
	res, err = run()
	close(done)
	restore()
	return res, presses.Load() > 0, err
}

// interruptTurn interrupts the session's running turn; when none runs yet
// (the message was just sent) it tries again until the turn shows up or
// the run ends.
func interruptTurn(ctx context.Context, rt *talaria.Runtime, session string, done <-chan struct{}, errOut io.Writer) {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for {
		_, err := rt.Interrupt(ictx, session, "interrupted from the chat")
		if err == nil {
			return
		}
		if !errors.Is(err, talaria.ErrNoRunningTurn) || ictx.Err() != nil {
			fmt.Fprintf(errOut, "talaria: %s\n", plainError(oneLine(err)))
			return
		}
		select {
		case <-done:
			return
		case <-ictx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// oneShotModel is the model a turn that could not report one ran, or would
// have run, with: -m, else the model of the worker: this process's own
// (embedded), or serve's, which may differ from this shell's.
func oneShotModel(cmd *cobra.Command, cfg config.Config, rt *talaria.Runtime) string {
	if rt.Worker != nil || cmd.Flags().Changed("model") {
		return cfg.Model.Name
	}
	if info, err := talaria.ReadServeInfo(cfg.Home); err == nil {
		return talaria.ServeSettings(info).Model
	}
	return ""
}
