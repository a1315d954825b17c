package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/textline"
)

// openStore opens the database a running serve uses, or the configured one.
func openStore(ctx context.Context, cfg config.Config) (*talaria.Store, error) {
	dsn := cfg.DB
	if lock, err := talaria.TryLock(cfg.Home); err == nil {
		lock.Release()
	} else if info, ierr := talaria.ReadServeInfo(cfg.Home); ierr == nil {
		if err := checkServeDB(cfg, info); err != nil {
			return nil, err
		}
		dsn = info.DB
	}
	st, err := talaria.OpenStore(ctx, dsn)
	if err != nil {
		return nil, usageErr(fmt.Errorf("open database: %w", err))
	}
	return st, nil
}

func newSessionsCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, search and remove sessions",
		Args:  noArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newSessionsListCommand(), newSessionsShowCommand(), newSessionsSearchCommand(), newSessionsRmCommand())
	return c
}

// storeCommand builds a sessions sub-command working on the store.
func storeCommand(use, short string, args cobra.PositionalArgs, setup func(*cobra.Command),
	run func(cmd *cobra.Command, st *talaria.Store, args []string) error) *cobra.Command {
	c := &cobra.Command{
		Use: use, Short: short, Args: args,
		RunE: func(cmd *cobra.Command, a []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			st, err := openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			defer st.Close()
			return run(cmd, st, a)
		},
	}
	if setup != nil {
		setup(c)
	}
	return c
}

func exactArgs(n int, what string) cobra.PositionalArgs { return rangeArgs(n, n, what) }

// rangeArgs accepts from lo to hi arguments; what names them in the
// refusal.
func rangeArgs(lo, hi int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < lo || len(args) > hi {
			return usagef("%s needs %s (see '%s --help')", c.CommandPath(), what, c.CommandPath())
		}
		return nil
	}
}

func newSessionsListCommand() *cobra.Command {
	var limit int
	var all bool
	var out outputFormat
	return storeCommand("list", "List sessions, most recent first", noArgs,
		func(c *cobra.Command) {
			c.Flags().IntVarP(&limit, "limit", "n", 20, "how many sessions (0: all)")
			c.Flags().BoolVarP(&all, "all", "a", false, "also the sessions the engine makes to review memory (review.*)")
			out.register(c)
		},
		func(cmd *cobra.Command, st *talaria.Store, _ []string) error {
			asJSON := out.json()
			sessions, _, err := talaria.ListSessions(cmd.Context(), st, 0, limit, all)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), sessions)
			}
			return printSessionList(cmd.OutOrStdout(), sessions)
		})
}

// printSessionList prints one line per session; PARENT is the session a
// compacted session was made from ("-" for a root).
func printSessionList(out io.Writer, sessions []talaria.SessionView) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SESSION\tPARENT\tTURNS\tMODEL\tUPDATED\tFIRST MESSAGE")
	for _, s := range sessions {
		parent := cmp.Or(s.ParentSessionID, "-")
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", s.ID, parent, s.TurnCount, s.Model,
			s.UpdatedAt.Local().Format("2006-01-02 15:04"), oneLineText(s.FirstMessage, 50))
	}
	return w.Flush()
}

func newSessionsShowCommand() *cobra.Command {
	var out outputFormat
	return storeCommand("show ID", "Show a session's conversation and turns", exactArgs(1, "a session id"), out.register,
		func(cmd *cobra.Command, st *talaria.Store, args []string) error {
			asJSON := out.json()
			d, err := talaria.ShowSession(cmd.Context(), st, args[0])
			if errors.Is(err, talaria.ErrNotFound) {
				return &exitError{code: exitFailure, err: fmt.Errorf("no session %q", args[0])}
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), d)
			}
			printSession(cmd.OutOrStdout(), d)
			return nil
		})
}

func newSessionsRmCommand() *cobra.Command {
	return storeCommand("rm ID", "Delete a session and everything stored for it (a session compacted from it stays)", exactArgs(1, "a session id"), nil,
		func(cmd *cobra.Command, st *talaria.Store, args []string) error {
			home, err := config.HomeDir(os.Getenv)
			if err != nil {
				return err
			}
			err = talaria.DeleteSession(cmd.Context(), st, home, args[0])
			if errors.Is(err, talaria.ErrNotFound) {
				return &exitError{code: exitFailure, err: fmt.Errorf("no session %q", args[0])}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted session %s\n", args[0])
			return nil
		})
}

// printSession prints a session: a header, its place in its lineage when
// it has been compacted or is a compaction, its turns, its conversation and
// the tasks it delegated.
func printSession(w io.Writer, d talaria.SessionDetail) {
	sess := d.Session
	fmt.Fprintf(w, "session %s — model %s, %d turns, created %s\n", sess.ID, sess.Model, sess.TurnCount, sess.CreatedAt.Local().Format("2006-01-02 15:04"))
	if line := lineageLine(sess, d.Lineage); line != "" {
		fmt.Fprintf(w, "  %s\n", line)
	}
	if sess.DelegatedFrom != "" {
		fmt.Fprintf(w, "  a delegated task of session %s\n", sess.DelegatedFrom)
	}
	if sess.Owner != "" {
		fmt.Fprintf(w, "  the chat %s's: its recall and searches see that chat's sessions only\n", sess.Owner)
	}
	for _, t := range d.Turns {
		fmt.Fprintf(w, "  %s\n", turnLine(t))
	}
	fmt.Fprintln(w)
	for _, m := range d.Messages {
		switch {
		case m.Role == "tool":
			fmt.Fprintf(w, "  [%s %s] %s\n", m.Name, resultWord(m.Outcome), oneLineText(m.Content, 200))
		case len(m.ToolCalls) > 0:
			for _, c := range m.ToolCalls {
				fmt.Fprintf(w, "assistant → %s %s\n", c.Function.Name, oneLineText(c.Function.Arguments, 200))
			}
			if m.Content != "" {
				fmt.Fprintf(w, "assistant: %s\n", m.Content)
			}
		default:
			fmt.Fprintf(w, "%s: %s\n", m.Role, m.Content)
		}
	}
	for _, t := range d.Tasks {
		fmt.Fprintf(w, "  task session %s — %d turns: %s\n", t.ID, t.TurnCount, oneLineText(t.FirstMessage, 80))
	}
}

// turnLine is a turn of `sessions show`: "turn N: STATUS (EXIT REASON), C
// model calls, T tokens", the exit reason left out when there is none or
// it only repeats the status. Pure.
func turnLine(t talaria.TurnView) string {
	state := t.Status
	if t.ExitReason != "" && t.ExitReason != t.Status {
		state += " (" + t.ExitReason + ")"
	}
	return fmt.Sprintf("turn %d: %s, %d model calls, %d tokens", t.Number, state, t.APICalls, t.TotalTokens)
}

// resultWord names a tool result by how its call ended: "result" for one
// that ran to its end, else its outcome ("failed", "stopped", "not run",
// "outcome unknown").
// Pure.
func resultWord(outcome string) string {
	switch outcome {
	case talaria.OutcomeDone:
		return "result"
	case talaria.OutcomeNotRun:
		return "not run"
	case talaria.OutcomeUnknown:
		return "outcome unknown"
	}
	return outcome
}

// lineageLine describes where sess stands in its lineage: "lineage ROOT,
// generation N: compacted from PARENT, continued in CHILD", the parts that
// do not apply left out; "" for a session never compacted.
func lineageLine(sess talaria.SessionView, lineage []talaria.SessionView) string {
	var parts []string
	if sess.ParentSessionID != "" {
		parts = append(parts, "compacted from "+sess.ParentSessionID)
	}
	for _, s := range lineage {
		if s.ParentSessionID == sess.ID {
			parts = append(parts, "continued in "+s.ID)
			break
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("lineage %s, generation %d: %s", sess.LineageID, sess.Generation, strings.Join(parts, ", "))
}

func oneLineText(s string, n int) string { return textline.Of(s, n) }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
