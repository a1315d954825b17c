package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

// cronOutputView is `cron output -o json`: what one run answered and
// where it was read from.
type cronOutputView struct {
	Job         string    `json:"job"`
	JobID       string    `json:"job_id"`
	ScheduledAt time.Time `json:"scheduled_at"`
	Status      string    `json:"status"`
	// Source is "session" (the run's turn, in the store) or "file" (its
	// local delivery: the output of a job that only runs a script).
	Source    string `json:"source"`
	SessionID string `json:"session_id,omitempty"`
	Path      string `json:"path,omitempty"`
	Text      string `json:"text"`
}

func newCronOutputCommand() *cobra.Command {
	var out outputFormat
	return storeCommand("output JOB [RUN]", "Print what a run of a job answered (by default its latest run that ended)",
		func(c *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usagef("%s needs a job name or id and, optionally, a run: its slot as 'cron runs' shows it (see '%s --help')",
					c.CommandPath(), c.CommandPath())
			}
			return nil
		},
		func(c *cobra.Command) {
			c.Long = `output prints the final answer of one run of a job, whatever its delivery targets
were: the answer is kept with the run's session in the store (a job that only runs
a script: its local delivery file). RUN is the run's slot as 'talaria cron runs JOB'
prints it (e.g. 2026-03-01T09:00:00Z) or its workflow id; without it, the latest
run that ended.`
			out.register(c)
		},
		func(cmd *cobra.Command, st *talaria.Store, args []string) error {
			asJSON := out.json()
			j, err := cronJob(cmd, st, args[0])
			if err != nil {
				return err
			}
			ref := ""
			if len(args) == 2 {
				ref = args[1]
			}
			run, err := pickCronRun(cmd.Context(), st, j, ref)
			if err != nil {
				return err
			}
			home, err := config.HomeDir(os.Getenv)
			if err != nil {
				return err
			}
			v, err := cronRunOutput(cmd.Context(), st, home, j, run)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), v)
			}
			text := v.Text
			if !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), text)
			return err
		})
}

// parseRunRef reads a run reference: a slot in RFC 3339 or a run's
// workflow id ("cron/<job-id>/<slot>"). Pure.
func parseRunRef(jobID, ref string) (time.Time, error) {
	s := strings.TrimPrefix(strings.TrimSpace(ref), "cron/"+jobID+"/")
	slot, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usagef("run %q: give its slot as 'talaria cron runs' prints it (e.g. 2026-03-01T09:00:00Z) or its workflow id", ref)
	}
	return slot.UTC(), nil
}

// pickCronRun finds the run ref names, or (ref empty) the latest run that
// ended; a job without such a run is an error saying so.
func pickCronRun(ctx context.Context, st *talaria.Store, j *talaria.CronJob, ref string) (*talaria.CronRun, error) {
	notFound := func(format string, a ...any) error {
		return &exitError{code: exitFailure, err: fmt.Errorf(format, a...)}
	}
	if ref != "" {
		slot, err := parseRunRef(j.ID, ref)
		if err != nil {
			return nil, err
		}
		run, err := st.CronRun(ctx, j.ID, slot)
		if errors.Is(err, talaria.ErrNotFound) {
			return nil, notFound("%s has no run at %s (see 'talaria cron runs %s')", j.Name, slot.Format(time.RFC3339), j.Name)
		}
		return run, err
	}
	runs, err := st.CronRuns(ctx, j.ID, 0)
	if err != nil {
		return nil, err
	}
	for i := range runs {
		if runs[i].EndedAt != nil && (runs[i].Status == talaria.RunCompleted || runs[i].Status == talaria.RunFailed) {
			return &runs[i], nil
		}
	}
	if len(runs) > 0 && runs[0].Status == talaria.RunStarted {
		return nil, notFound("%s has no finished run yet: its run %s is still going", j.Name, runs[0].ScheduledAt.UTC().Format(time.RFC3339))
	}
	return nil, notFound("%s has no finished run yet (see 'talaria cron runs %s')", j.Name, j.Name)
}

// cronRunOutput reads what run answered: the final answer of its turn, from
// the store, or else its local delivery file under home.
func cronRunOutput(ctx context.Context, st *talaria.Store, home string, j *talaria.CronJob, run *talaria.CronRun) (cronOutputView, error) {
	slot := run.ScheduledAt.UTC()
	v := cronOutputView{Job: j.Name, JobID: j.ID, ScheduledAt: slot, Status: run.Status}
	sessionID := talaria.CronSessionID(j.ID, slot)
	turns, err := st.Turns(ctx, sessionID)
	if err != nil {
		return v, err
	}
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].FinalResponse != "" {
			v.Source, v.SessionID, v.Text = "session", sessionID, turns[i].FinalResponse
			return v, nil
		}
	}
	path := talaria.LocalOutputPath(home, j.Name, slot)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		v.Source, v.Path, v.Text = "file", path, localOutputText(string(data))
		return v, nil
	case !errors.Is(err, fs.ErrNotExist):
		return v, fmt.Errorf("read %s: %w", path, err)
	}
	why := run.Status
	switch {
	case run.Status == talaria.RunStarted && run.EndedAt == nil:
		why = "it is still going"
	case run.Error != "":
		why += ": " + run.Error
	case run.Delivery != "":
		why += ", " + run.Delivery
	}
	return v, &exitError{code: exitFailure, err: fmt.Errorf("run %s of %s has no output (%s)", slot.Format(time.RFC3339), j.Name, oneLineText(why, 300))}
}

// localOutputText is the answer in a local delivery file: the file without
// the heading the delivery puts first ("# <job> — <slot>", a blank line).
// Pure.
func localOutputText(file string) string {
	if !strings.HasPrefix(file, "# ") {
		return file
	}
	if _, body, ok := strings.Cut(file, "\n\n"); ok {
		return body
	}
	return file
}
