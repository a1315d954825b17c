package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/scheduler"
)

// cronJobView is a job as `cron show --json` prints it: snake_case keys,
// the catch-up window as a duration string ("1h0m0s"), times in RFC 3339.
type cronJobView struct {
	ID            string     `json:"id"`
	Name          string     `json:"name"`
	Schedule      string     `json:"schedule"`
	TimeZone      string     `json:"time_zone,omitempty"`
	Enabled       bool       `json:"enabled"`
	NextRun       *time.Time `json:"next_run,omitempty"`
	Prompt        string     `json:"prompt"`
	Model         string     `json:"model,omitempty"`
	Tools         []string   `json:"tools"`
	MaxIterations int        `json:"max_iterations,omitempty"`
	PreRunScript  string     `json:"pre_run_script,omitempty"`
	Deliver       []string   `json:"deliver"`
	Overlap       string     `json:"overlap"`
	CatchUp       string     `json:"catch_up"`
	CatchUpWindow string     `json:"catch_up_window"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
	LastScheduled *time.Time `json:"last_scheduled,omitempty"`
}

// newCronJobView describes j; its next run is computed from now (none for
// a paused job or a schedule that no longer parses or has no slot left).
func newCronJobView(j models.CronJob, now time.Time) cronJobView {
	v := cronJobView{ID: j.ID, Name: j.Name, Schedule: j.Schedule, TimeZone: j.TimeZone, Enabled: j.Enabled,
		Prompt: j.Prompt, Model: j.Model, Tools: nonNil(j.Toolsets), MaxIterations: j.MaxIterations,
		PreRunScript: j.PreRunScript, Deliver: nonNil(j.Deliver), Overlap: j.Overlap, CatchUp: j.CatchUp,
		CatchUpWindow: j.CatchUpWindow.String(), CreatedAt: j.CreatedAt.UTC(), UpdatedAt: j.UpdatedAt.UTC()}
	if j.LastScheduled != nil {
		t := j.LastScheduled.UTC()
		v.LastScheduled = &t
	}
	if next := nextRun(j, now); !next.IsZero() {
		v.NextRun = &next
	}
	return v
}

// nextRun is j's next slot after now, zero when it has none or is paused.
func nextRun(j models.CronJob, now time.Time) time.Time {
	if !j.Enabled {
		return time.Time{}
	}
	s, err := scheduler.ParseSchedule(j.Schedule, j.TimeZone, j.CreatedAt, j.CreatedAt)
	if err != nil {
		return time.Time{}
	}
	return s.Next(now).UTC()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// printCronJob prints a job for people: one field a line, durations as
// 1h0m0s, times in RFC 3339 (UTC), multi-line values indented whole.
func printCronJob(w io.Writer, v cronJobView) {
	or := func(s, fallback string) string {
		if s == "" {
			return fallback
		}
		return s
	}
	tz := or(v.TimeZone, "UTC")
	next := "-"
	if v.NextRun != nil {
		next = v.NextRun.Format(time.RFC3339)
	} else if !v.Enabled {
		next = "- (paused)"
	}
	maxIter := "the configured default"
	if v.MaxIterations > 0 {
		maxIter = fmt.Sprint(v.MaxIterations)
	}
	last := "-"
	if v.LastScheduled != nil {
		last = v.LastScheduled.Format(time.RFC3339)
	}
	fields := []struct{ name, value string }{
		{"schedule", v.Schedule + " (" + tz + ")"},
		{"enabled", fmt.Sprint(v.Enabled)},
		{"next run", next},
		{"prompt", or(v.Prompt, "-")},
		{"model", or(v.Model, "the configured default")},
		{"tools", or(strings.Join(v.Tools, ", "), "all")},
		{"max iterations", maxIter},
		{"pre-run script", or(v.PreRunScript, "-")},
		{"deliver", or(strings.Join(v.Deliver, ", "), engine.DefaultDelivery+" (the default)")},
		{"overlap", v.Overlap},
		{"catch-up", v.CatchUp + ", window " + v.CatchUpWindow},
		{"last slot", last},
		{"created", v.CreatedAt.Format(time.RFC3339)},
		{"updated", v.UpdatedAt.Format(time.RFC3339)},
	}
	fmt.Fprintf(w, "job %s (%s)\n", v.Name, v.ID)
	for _, f := range fields {
		fmt.Fprintf(w, "  %-15s %s\n", f.name+":", indentLines(f.value, strings.Repeat(" ", 18)))
	}
}

// cronRunView is a run as `cron runs --json` prints it.
type cronRunView struct {
	ScheduledAt time.Time  `json:"scheduled_at"`
	Status      string     `json:"status"`
	ExitReason  string     `json:"exit_reason,omitempty"`
	WorkflowID  string     `json:"workflow_id,omitempty"`
	RecordedAt  time.Time  `json:"recorded_at"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	EndedAt     *time.Time `json:"ended_at,omitempty"`
	Delivery    string     `json:"delivery,omitempty"`
	Error       string     `json:"error,omitempty"`
}

func newCronRunViews(runs []models.CronRun) []cronRunView {
	utc := func(t *time.Time) *time.Time {
		if t == nil {
			return nil
		}
		u := t.UTC()
		return &u
	}
	out := make([]cronRunView, len(runs))
	for i, r := range runs {
		out[i] = cronRunView{ScheduledAt: r.ScheduledAt.UTC(), Status: r.Status, ExitReason: r.ExitReason,
			WorkflowID: r.WorkflowID, RecordedAt: r.RecordedAt.UTC(), StartedAt: utc(r.StartedAt), EndedAt: utc(r.EndedAt),
			Delivery: r.Delivery, Error: r.Error}
	}
	return out
}

// printCronRuns prints one line per run (slot, status, exit reason), its
// delivery and error whole on their own indented lines below it, and how
// to read a run's answer when one has ended.
func printCronRuns(w io.Writer, job string, runs []cronRunView) {
	if len(runs) == 0 {
		fmt.Fprintln(w, "no runs yet")
		return
	}
	fmt.Fprintf(w, "%-20s  %-9s  %s\n", "SLOT", "STATUS", "EXIT")
	for _, r := range runs {
		fmt.Fprintf(w, "%-20s  %-9s  %s\n", r.ScheduledAt.Format(time.RFC3339), r.Status, r.ExitReason)
		if r.Delivery != "" {
			fmt.Fprintf(w, "    delivery: %s\n", indentLines(r.Delivery, strings.Repeat(" ", 14)))
		}
		if r.Error != "" {
			fmt.Fprintf(w, "    error:    %s\n", indentLines(r.Error, strings.Repeat(" ", 14)))
		}
	}
	for _, r := range runs {
		if r.EndedAt != nil {
			fmt.Fprintf(w, "a run's answer: talaria cron output %s %s\n", job, r.ScheduledAt.Format(time.RFC3339))
			return
		}
	}
}

// indentLines keeps s whole, indenting its lines after the first.
func indentLines(s, indent string) string {
	s = strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	return strings.ReplaceAll(s, "\n", "\n"+indent)
}

// checkToolNames refuses a name that is not a built-in tool, in one line
// listing the known ones.
func checkToolNames(names []string) error {
	known := engine.ToolNames()
	for _, n := range names {
		if !slices.Contains(known, n) {
			return usagef("--tools %q: no such tool (tools: %s)", n, strings.Join(known, ", "))
		}
	}
	return nil
}
