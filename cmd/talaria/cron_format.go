package main

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/talaria-agent/talaria"
)

// printCronJob prints a job for people: one field a line, durations as
// 1h0m0s, times in RFC 3339 (UTC), multi-line values indented whole.
func printCronJob(w io.Writer, v talaria.CronView) {
	tz := cmp.Or(v.TimeZone, "UTC")
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
		{"prompt", cmp.Or(v.Prompt, "-")},
		{"model", cmp.Or(v.Model, "the configured default")},
		{"tools", cmp.Or(strings.Join(v.Tools, ", "), "all")},
		{"max iterations", maxIter},
		{"pre-run script", cmp.Or(v.PreRunScript, "-")},
		{"deliver", cmp.Or(strings.Join(v.Deliver, ", "), talaria.DefaultDelivery+" (the default)")},
		{"overlap", v.Overlap},
		{"catch-up", v.CatchUp + ", window " + v.CatchUpWindow},
		{"last slot", last},
		{"created", v.CreatedAt.Format(time.RFC3339)},
		{"updated", v.UpdatedAt.Format(time.RFC3339)},
	}
	if v.Origin != "" {
		fields = append(fields[:9:9], append([]struct{ name, value string }{{"origin", v.Origin + " (made in that chat)"}}, fields[9:]...)...)
	}
	fmt.Fprintf(w, "job %s (%s)\n", v.Name, v.ID)
	for _, f := range fields {
		fmt.Fprintf(w, "  %-15s %s\n", f.name+":", indentLines(f.value, strings.Repeat(" ", 18)))
	}
}

// printCronRuns prints one line per run (slot, status, exit reason), its
// delivery and error whole on their own indented lines below it, and how
// to read a run's answer when one has ended.
func printCronRuns(w io.Writer, job string, runs []talaria.CronRunView) {
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
