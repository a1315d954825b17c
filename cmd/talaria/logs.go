package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

// followInterval is how often `logs -f` looks for new lines.
const followInterval = 200 * time.Millisecond

var logKindPattern = regexp.MustCompile(`^[a-z]+$`)

func newLogsCommand() *cobra.Command {
	var (
		follow bool
		lines  int
		kind   string
	)
	c := &cobra.Command{
		Use:   "logs",
		Short: "Show the log files (Temporal's logs and Talaria's own)",
		Long: `logs prints the last lines of the log files in $TALARIA_HOME/logs: each kind of
process writes its own (serve.log, chat.log, worker.log, temporal.log,
scheduler.log, cli.log for the other commands), rotated at 10 MB with 5 old
files kept. Temporal's own log lines (SDK and embedded server) go only there,
never to the terminal unless --log-level debug.

Without --file the files are interleaved by time, each line prefixed with its
kind. -f keeps printing new lines as they are written, across rotation, until
Ctrl-C. logs only reads: it creates nothing.`,
		Example: `  talaria logs -n 20
  talaria logs -f --file serve`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if lines < 0 {
				return usagef("-n must be 0 or more (got %d)", lines)
			}
			if kind != "" && !logKindPattern.MatchString(kind) {
				return usagef("--file %q: name a kind such as serve, chat, worker or cli", kind)
			}
			home, err := config.HomeDir(os.Getenv)
			if err != nil {
				return usageErr(err)
			}
			kinds, err := logKinds(home, kind)
			if err != nil {
				return &exitError{code: exitFailure, err: err}
			}
			return showLogs(cmd, home, kinds, kind == "", lines, follow)
		},
	}
	c.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new lines (Ctrl-C ends)")
	c.Flags().IntVarP(&lines, "lines", "n", 100, "how many of the last lines to print")
	c.Flags().StringVar(&kind, "file", "", "only this log: serve, chat, worker, temporal, scheduler or cli")
	return c
}

// logKinds are the log files to show: want alone, or every one there is.
// No log yet is an error saying where logs go.
func logKinds(home, want string) ([]string, error) {
	dir := talaria.LogDir(home)
	have, err := talaria.LogFiles(home)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(have) == 0) {
		return nil, fmt.Errorf("no logs yet in %s (serve, chat, worker and the other commands write them there)", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("read the log directory: %w", err)
	}
	if want == "" {
		return have, nil
	}
	if !slices.Contains(have, want) {
		return nil, fmt.Errorf("no %s.log in %s (there are: %s)", want, dir, strings.Join(have, ", "))
	}
	return []string{want}, nil
}

// showLogs prints the last n lines of the kinds' files, then follows them
// (and, with all, files that appear meanwhile). With all, each line is
// prefixed with its kind.
func showLogs(cmd *cobra.Command, home string, kinds []string, all bool, n int, follow bool) error {
	out := cmd.OutOrStdout()
	byKind := map[string][]string{}
	for _, k := range kinds {
		lines, err := talaria.TailLog(talaria.LogPath(home, k), n)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("read %s: %w", talaria.LogPath(home, k), err)
		}
		byKind[k] = lines
	}
	for _, l := range talaria.MergeLogs(byKind, n) {
		printLogLine(out, l, all)
	}
	if !follow {
		return nil
	}
	var only []string
	if !all {
		only = kinds
	}
	return talaria.FollowLogs(cmd.Context(), home, only, followInterval, func(l talaria.LogLine) {
		printLogLine(out, l, all)
	})
}

func printLogLine(w io.Writer, l talaria.LogLine, prefix bool) {
	if prefix {
		fmt.Fprintf(w, "%s: %s\n", l.Kind, l.Text)
		return
	}
	fmt.Fprintln(w, l.Text)
}
