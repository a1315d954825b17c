package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/talaria-agent/talaria/config"
)

// cronTargetsHelp lists the delivery targets a job may have, as
// talaria.CheckCronDeliver accepts them.
const cronTargetsHelp = `  local                a Markdown file under $TALARIA_HOME/cron/output/<job>/
  webhook:<url>        a JSON POST to an http(s) URL, retried with backoff
  telegram:<chat id>   a Telegram chat (negative id for a group), via the gateway
  slack:<channel id>   a Slack channel or DM (C..., G..., D...), via the gateway
  discord:<channel id> a Discord channel, thread or DM (its number), via the gateway
  sms:<phone number>   a text to a number in E.164 (+15551234567), via the gateway's Twilio number
  whatsapp:<WhatsApp id> a WhatsApp user (the number's digits), within 24 h of their last message
  home                 the chat chosen with /sethome in the gateway
  origin               the chat a job made with /cron add came from (not for cron add)
  email:<address>      one address, through the SMTP server of delivery.smtp
--deliver is repeatable; a job without it delivers locally. Each delivery's
outcome, or its failure, is recorded on the run ('talaria cron runs JOB'). A
final answer of [SILENT] is not delivered. 'talaria cron output JOB [RUN]'
prints what a run answered.`

func newCronCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "cron",
		Short: "Scheduled agent jobs: add, list, show, pause, resume, run-now, rm, runs, output",
		Long: `cron manages scheduled jobs. Each job's prompt runs as an unattended agent turn
(dangerous commands are refused) at every slot of its schedule, exactly once per
slot, and its answer is delivered to each of its targets:
` + cronTargetsHelp + `
Schedules: 5-field cron ("0 9 * * 1-5", with CRON_TZ=Europe/Berlin or --tz),
@hourly/@daily/..., "every 2h", "@every 90m", one-shot "in 30m" or an RFC 3339
time. 'run-now' starts an extra run at once, each time it is asked. The scheduler
runs inside 'talaria serve' (or 'talaria scheduler'); it ticks when it starts and
at second 0 of every minute. When it starts, the slots that came due while no
scheduler ran are handled by --catch-up: last (the default) runs the latest one
within --catch-up-window (1h) and records the others missed; all runs every one
within the window, oldest first; none runs only a slot of the current minute.
Slots older than the window are recorded missed ('talaria cron runs JOB').`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newCronAddCommand(), newCronEditCommand(), newCronListCommand(), newCronShowCommand(), newCronRunsCommand(),
		newCronToggleCommand("pause", false), newCronToggleCommand("resume", true), newCronRmCommand(), newCronRunNowCommand(),
		newCronOutputCommand())
	return c
}

func newCronAddCommand() *cobra.Command {
	var spec talaria.CronJob
	var schedule, tz, catchUp, overlap string
	var window time.Duration
	c := storeCommand("add", "Add a scheduled job", noArgs,
		func(c *cobra.Command) {
			c.Long = "add adds a scheduled job. Its answer at each slot is delivered to its targets:\n" + cronTargetsHelp
			c.Flags().StringVar(&spec.Name, "name", "", "job name (unique)")
			c.Flags().StringVar(&schedule, "schedule", "", `when: "0 9 * * 1-5", "@daily", "every 2h", "in 30m", an RFC 3339 time`)
			c.Flags().StringVar(&tz, "tz", "", "time zone of a cron schedule, e.g. Europe/Berlin (default UTC)")
			c.Flags().StringVar(&spec.Prompt, "prompt", "", "what the agent does at each slot")
			c.Flags().StringArrayVar(&spec.Deliver, "deliver", nil, "delivery target, repeatable: local, webhook:<url>, telegram:<chat id>, slack:<channel id>, discord:<channel id>, sms:<phone number>, whatsapp:<WhatsApp id>, home or email:<address> (default local)")
			c.Flags().StringVarP(&spec.Model, "model", "m", "", "model for this job's turns (default: the model of the serve or worker that runs each one, at run time)")
			c.Flags().IntVar(&spec.MaxIterations, "max-iterations", 0, "iteration budget of each run")
			c.Flags().StringSliceVar(&spec.Toolsets, "tools", nil, "tools or toolsets the job may use, comma-separated (default: all; 'talaria tools' lists them)")
			c.Flags().StringVar(&spec.PreRunScript, "pre-run", "", "shell script whose output is added to the prompt (alone: delivered as is, no model call)")
			c.Flags().StringVar(&overlap, "overlap", "skip", "a slot due while the previous run still goes: skip or allow")
			c.Flags().StringVar(&catchUp, "catch-up", "last", "slots that came due while no scheduler ran: last (run the latest, record the others missed), all (run each, oldest first) or none (only a slot of the current minute)")
			c.Flags().DurationVar(&window, "catch-up-window", time.Hour, "how far back those slots are caught up; older ones are recorded missed")
		},
		func(cmd *cobra.Command, st *talaria.Store, _ []string) error {
			now := time.Now().UTC()
			job, sched, err := talaria.NewCronJob(talaria.CronSpec{Name: spec.Name, Schedule: schedule, TimeZone: tz, Prompt: spec.Prompt,
				Deliver: spec.Deliver, Model: spec.Model, MaxIterations: spec.MaxIterations, Tools: spec.Toolsets,
				PreRunScript: spec.PreRunScript, Overlap: overlap, CatchUp: catchUp, CatchUpWindow: window}, now)
			if err != nil {
				return cronUsage(err, "cron add needs --name, --schedule and --prompt (or --pre-run)")
			}
			created, err := st.CreateCronJob(cmd.Context(), job)
			if errors.Is(err, talaria.ErrInvalidArgument) || errors.Is(err, talaria.ErrCronJobExists) {
				return usageErr(err)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added job %s (%s): %s; next run %s\n", created.Name, created.ID, sched,
				sched.Next(now).Local().Format("2006-01-02 15:04 MST"))
			if home, err := config.HomeDir(os.Getenv); err == nil {
				if w := schedulerWarning(cmd.Context(), st, home, time.Now()); w != "" {
					fmt.Fprintln(cmd.ErrOrStderr(), w)
				}
			}
			return nil
		})
	return c
}

func newCronListCommand() *cobra.Command {
	var out outputFormat
	return storeCommand("list", "List scheduled jobs", noArgs, out.register,
		func(cmd *cobra.Command, st *talaria.Store, _ []string) error {
			asJSON := out.json()
			jobs, err := st.CronJobs(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				views := make([]talaria.CronView, len(jobs))
				for i, j := range jobs {
					views[i] = talaria.NewCronView(j, time.Now())
				}
				return writeJSON(cmd.OutOrStdout(), views)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tID\tSCHEDULE\tENABLED\tNEXT\tDELIVER")
			now := time.Now().UTC()
			for _, j := range jobs {
				next := "-"
				if s, err := talaria.ParseSchedule(j.Schedule, j.TimeZone, j.CreatedAt, j.CreatedAt); err == nil && j.Enabled {
					if n := s.Next(now); !n.IsZero() {
						next = n.Local().Format("2006-01-02 15:04")
					}
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%v\t%s\t%s\n", j.Name, j.ID, j.Schedule, j.Enabled, next, strings.Join(j.Deliver, ","))
			}
			return w.Flush()
		})
}

func newCronShowCommand() *cobra.Command {
	var out outputFormat
	return storeCommand("show JOB", "Show a job", exactArgs(1, "a job name or id"), out.register,
		func(cmd *cobra.Command, st *talaria.Store, args []string) error {
			asJSON := out.json()
			j, err := cronJob(cmd, st, args[0])
			if err != nil {
				return err
			}
			v := talaria.NewCronView(*j, time.Now())
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), v)
			}
			printCronJob(cmd.OutOrStdout(), v)
			return nil
		})
}

func newCronRunsCommand() *cobra.Command {
	var limit int
	var out outputFormat
	return storeCommand("runs JOB", "Show a job's runs: status, times, exit reason, delivery", exactArgs(1, "a job name or id"),
		func(c *cobra.Command) {
			c.Flags().IntVarP(&limit, "limit", "n", 20, "how many runs")
			out.register(c)
		},
		func(cmd *cobra.Command, st *talaria.Store, args []string) error {
			asJSON := out.json()
			j, err := cronJob(cmd, st, args[0])
			if err != nil {
				return err
			}
			runs, err := st.CronRuns(cmd.Context(), j.ID, limit)
			if err != nil {
				return err
			}
			views := talaria.NewCronRunViews(runs)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), views)
			}
			printCronRuns(cmd.OutOrStdout(), j.Name, views)
			return nil
		})
}

// toggledWord is what `cron pause` and `cron resume` report having done.
func toggledWord(enabled bool) string {
	if enabled {
		return "resumed"
	}
	return "paused"
}

func newCronToggleCommand(use string, enabled bool) *cobra.Command {
	return storeCommand(use+" JOB", map[bool]string{false: "Pause a job", true: "Resume a paused job"}[enabled],
		exactArgs(1, "a job name or id"), nil,
		func(cmd *cobra.Command, st *talaria.Store, args []string) error {
			if _, err := cronJob(cmd, st, args[0]); err != nil {
				return err
			}
			if err := st.SetCronJobEnabled(cmd.Context(), args[0], enabled); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", toggledWord(enabled), args[0])
			return nil
		})
}

func newCronRmCommand() *cobra.Command {
	return storeCommand("rm JOB", "Delete a job and its runs", exactArgs(1, "a job name or id"), nil,
		func(cmd *cobra.Command, st *talaria.Store, args []string) error {
			if _, err := cronJob(cmd, st, args[0]); err != nil {
				return err
			}
			if err := st.DeleteCronJob(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted %s\n", args[0])
			return nil
		})
}

func newCronRunNowCommand() *cobra.Command {
	return controlCommandNoSession("run-now JOB", "Run a job now (through the running serve)",
		func(cmd *cobra.Command, _ config.Config, rt *talaria.Runtime, args []string) error {
			j, err := cronJob(cmd, rt.Store, args[0])
			if err != nil {
				return err
			}
			run, err := rt.Cron().RunNow(cmd.Context(), *j)
			if err != nil {
				return err
			}
			slot := run.ScheduledAt.UTC().Format(time.RFC3339)
			fmt.Fprintf(cmd.OutOrStdout(), "started %s: run %s of %s (see 'talaria cron runs %s', 'talaria cron output %s %s')\n",
				run.WorkflowID, slot, j.Name, j.Name, j.Name, slot)
			if w := workerWarning(cmd.Context(), rt); w != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), w)
			}
			warnServeModel(cmd.ErrOrStderr(), rt.Config.Home) // this shell's endpoint or model is not serve's
			return nil
		})
}

func cronJob(cmd *cobra.Command, st *talaria.Store, idOrName string) (*talaria.CronJob, error) {
	j, err := st.CronJob(cmd.Context(), idOrName)
	if errors.Is(err, talaria.ErrNotFound) {
		return nil, &exitError{code: exitFailure, err: fmt.Errorf("no cron job %q (see 'talaria cron list')", idOrName)}
	}
	return j, err
}

func newCronEditCommand() *cobra.Command {
	var schedule, tz, prompt, model, overlap, catchUp string
	var deliver, toolsets []string
	var maxIterations int
	return storeCommand("edit JOB", "Change a job (only the flags given; none: its prompt in $EDITOR)", exactArgs(1, "a job name or id"),
		func(c *cobra.Command) {
			c.Long = `edit changes the fields of a job given as flags and keeps the others. Without any
of these flags it opens the job's prompt in $EDITOR (default vi; a command with
arguments such as "code -w" works) and saves it when the editor exits.`
			c.Flags().StringVar(&schedule, "schedule", "", "new schedule")
			c.Flags().StringVar(&tz, "tz", "", "new time zone")
			c.Flags().StringVar(&prompt, "prompt", "", "new prompt")
			c.Flags().StringVarP(&model, "model", "m", "", "new model")
			c.Flags().StringArrayVar(&deliver, "deliver", nil, "delivery targets, as for add, plus origin for a job made in a chat (replace the old ones)")
			c.Flags().StringSliceVar(&toolsets, "tools", nil, "tools or toolsets the job may use (replace)")
			c.Flags().IntVar(&maxIterations, "max-iterations", 0, "new iteration budget")
			c.Flags().StringVar(&overlap, "overlap", "", "skip or allow")
			c.Flags().StringVar(&catchUp, "catch-up", "", "none, last or all")
		},
		func(cmd *cobra.Command, st *talaria.Store, args []string) error {
			j, err := cronJob(cmd, st, args[0])
			if err != nil {
				return err
			}
			f := cmd.Flags()
			if !anyChanged(f, "schedule", "tz", "prompt", "model", "deliver", "tools", "max-iterations", "overlap", "catch-up") {
				return editCronPrompt(cmd, st, j)
			}
			var e talaria.CronEdit
			set := func(name string, apply func()) {
				if f.Changed(name) {
					apply()
				}
			}
			set("schedule", func() { e.Schedule = &schedule })
			set("tz", func() { e.TimeZone = &tz })
			set("prompt", func() { e.Prompt = &prompt })
			set("model", func() { e.Model = &model })
			set("deliver", func() { e.Deliver = &deliver })
			set("tools", func() { e.Tools = &toolsets })
			set("max-iterations", func() { e.MaxIterations = &maxIterations })
			set("overlap", func() { e.Overlap = &overlap })
			set("catch-up", func() { e.CatchUp = &catchUp })
			if err := e.Apply(j); err != nil {
				return cronUsage(err, "")
			}
			if err := st.UpdateCronJob(cmd.Context(), *j); err != nil {
				if errors.Is(err, talaria.ErrInvalidArgument) {
					return usageErr(err)
				}
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "updated %s\n", j.Name)
			return nil
		})
}

// cronUsage is the usage error of a job that does not pass cronjob's
// checks: a field's error worded for flags, incomplete for an incomplete
// job.
func cronUsage(err error, incomplete string) error {
	var fe *talaria.CronFieldError
	switch {
	case errors.As(err, &fe) && fe.Err != nil:
		return usageErr(fe.Err)
	case errors.As(err, &fe):
		return usagef("%s", fe.Flag())
	case errors.Is(err, talaria.ErrCronIncomplete) && incomplete != "":
		return usagef("%s", incomplete)
	}
	return usageErr(err)
}

// anyChanged reports whether any of the named flags was given.
func anyChanged(f *pflag.FlagSet, names ...string) bool { return slices.ContainsFunc(names, f.Changed) }

// editCronPrompt opens j's prompt in $EDITOR and saves the edited text.
func editCronPrompt(cmd *cobra.Command, st *talaria.Store, j *talaria.CronJob) error {
	tmp, err := os.CreateTemp("", "talaria-cron-prompt-*.md") // not the job's id: it may hold a '/'
	if err != nil {
		return fmt.Errorf("a file for the prompt: %w", err)
	}
	path := tmp.Name()
	defer os.Remove(path)
	_, werr := tmp.WriteString(j.Prompt)
	if err := errors.Join(werr, tmp.Close()); err != nil {
		return fmt.Errorf("write the prompt to %s: %w", path, err)
	}
	if err := runEditor(cmd.Context(), path); err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the edited prompt: %w", err)
	}
	prompt := strings.TrimRight(string(data), "\n")
	switch {
	case prompt == strings.TrimRight(j.Prompt, "\n"):
		fmt.Fprintf(cmd.OutOrStdout(), "%s: prompt unchanged\n", j.Name)
		return nil
	case strings.TrimSpace(prompt) == "" && j.PreRunScript == "":
		return usagef("the prompt of %s cannot be empty: nothing changed", j.Name)
	}
	j.Prompt = prompt
	if err := st.UpdateCronJob(cmd.Context(), *j); err != nil {
		if errors.Is(err, talaria.ErrInvalidArgument) {
			return usageErr(err)
		}
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "updated %s (prompt)\n", j.Name)
	return nil
}
