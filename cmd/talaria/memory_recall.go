package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

// memoryStoreCommand runs with the configuration and the store open.
func memoryStoreCommand(use, short, long string, args cobra.PositionalArgs, setup func(*cobra.Command),
	run func(cmd *cobra.Command, cfg config.Config, st *talaria.Store, args []string) error) *cobra.Command {
	c := &cobra.Command{
		Use: use, Short: short, Long: long, Args: args,
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
			return run(cmd, cfg, st, a)
		},
	}
	if setup != nil {
		setup(c)
	}
	return c
}

func newMemoryStatusCommand() *cobra.Command {
	var out outputFormat
	return memoryStoreCommand("status", "Say whether recall across sessions is on, and what it holds",
		`status tells the memory provider (recall, the built-in one, or none when
memory.recall is off), how many session summaries and summary vectors the store
holds, the embeddings endpoint, the auxiliary model that writes questions like
a turn's message for recall (query expansion), the prefetch budget, the idle time after which a
session is summarised, and the bound of the recalled block.`, noArgs,
		func(c *cobra.Command) { out.register(c) },
		func(cmd *cobra.Command, cfg config.Config, st *talaria.Store, _ []string) error {
			m := cfg.Memory
			s, err := talaria.MemoryStatusOf(cmd.Context(), cfg, st)
			if err != nil {
				return err
			}
			n, v := s.Summaries, s.Vectors
			if out.json() {
				return writeJSON(cmd.OutOrStdout(), s)
			}
			w := cmd.OutOrStdout()
			provider := s.Provider
			if provider == "" {
				provider = "none (memory.recall is off)"
			}
			fmt.Fprintf(w, "provider:    %s\nsummaries:   %d (%d with a vector)\n", provider, n, v)
			if s.Embeddings != "" {
				fmt.Fprintf(w, "embeddings:  %s\n", s.Embeddings)
			} else {
				fmt.Fprintln(w, "embeddings:  none (full-text recall only)")
			}
			if s.Expansion != "" {
				fmt.Fprintf(w, "expansion:   questions from the auxiliary model %s\n", s.Expansion)
			} else if s.Provider == config.MemoryRecall {
				fmt.Fprintln(w, "expansion:   none (no auxiliary model)")
			}
			fmt.Fprintf(w, "budget:      %s per prefetch\nsummaries:   after %s idle, a reset or a compaction\nblock:       at most %d bytes\n",
				m.Budget(), m.Idle(), m.Bytes())
			return nil
		})
}

func newMemorySearchCommand() *cobra.Command {
	var out outputFormat
	var limit int
	return memoryStoreCommand("search QUERY", "Show what recall would find for a message",
		`search runs the recall a turn's first model call runs (memory.recall) for the
message QUERY, over every session's summary and messages (and their summaries'
vectors when memory.embeddings is set), and prints the block the model would
get. It works whether or not recall is on in config.yaml.`,
		func(c *cobra.Command, args []string) error {
			if strings.TrimSpace(strings.Join(args, " ")) == "" {
				return usagef("%s needs the message to recall for (see '%s --help')", c.CommandPath(), c.CommandPath())
			}
			return nil
		},
		func(c *cobra.Command) {
			c.Flags().IntVarP(&limit, "limit", "n", 0, "at most this many sessions (default 3)")
			out.register(c)
		},
		func(cmd *cobra.Command, cfg config.Config, st *talaria.Store, args []string) error {
			cfg.Memory.Recall, cfg.Memory.Provider = true, config.MemoryRecall
			p, err := talaria.NewMemoryProvider(cfg, st, newLogger(cfg.LogLevel))
			if err != nil {
				return err
			}
			rec, err := p.Prefetch(cmd.Context(), talaria.MemoryQuery{Text: strings.Join(args, " "), Limit: limit})
			if err != nil {
				return err
			}
			if out.json() {
				return writeJSON(cmd.OutOrStdout(), rec.Items)
			}
			printRecall(cmd.OutOrStdout(), rec, cfg.Memory.Bytes())
			return nil
		})
}

func printRecall(w io.Writer, rec talaria.MemoryRecall, bytes int) {
	if len(rec.Items) == 0 {
		fmt.Fprintln(w, "nothing recalled")
		return
	}
	fmt.Fprintln(w, talaria.RenderRecall(rec, bytes))
}

func newMemoryRecallCommand() *cobra.Command {
	var out outputFormat
	return memoryStoreCommand("recall SESSION", "Show a session's summary, as recall shows it",
		`recall prints the summary kept of SESSION (written when it ended: a reset, an
idle time, a compaction, or 'talaria memory summarize'), with its date and model.
Exit status 1 when the session has no summary. 'talaria sessions rm SESSION'
deletes it together with the session.`, exactArgs(1, "a session id"),
		func(c *cobra.Command) { out.register(c) },
		func(cmd *cobra.Command, _ config.Config, st *talaria.Store, args []string) error {
			sum, err := st.Summary(cmd.Context(), args[0])
			if err != nil {
				return &exitError{code: exitFailure, err: fmt.Errorf("no summary of session %q", args[0])}
			}
			if out.json() {
				return writeJSON(cmd.OutOrStdout(), talaria.NewMemorySummaryView(sum))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "session %s, summarised %s by %s (after %d turns)\n\n%s\n",
				sum.SessionID, sum.UpdatedAt.Local().Format("2006-01-02 15:04"), orNone(sum.Model), sum.Turns, sum.Summary)
			return nil
		})
}

func orNone(s string) string {
	if s == "" {
		return "(unknown model)"
	}
	return s
}

func newMemorySummarizeCommand() *cobra.Command {
	return controlCommand("summarize SESSION", "Summarise a session now, for recall in later sessions",
		`summarize has the running 'talaria serve' write the summary of SESSION now, as it
does when a session ends (a chat's reset, memory.summary_idle without a turn, a
compaction), and waits for it. The session's model writes it: topic, decisions,
facts. A session summarised since its last turn is left as it is. Needs
memory.recall: true.`, 1, nil,
		func(cmd *cobra.Command, _ config.Config, rt *talaria.Runtime, args []string) error {
			if err := rt.Summarize(cmd.Context(), args[0]); err != nil {
				if strings.Contains(err.Error(), talaria.ErrNotFound.Error()) {
					return &exitError{code: exitFailure, err: fmt.Errorf("no session %q", args[0])}
				}
				return &exitError{code: exitFailure, err: err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "summarised session %s\n", args[0])
			return nil
		})
}
