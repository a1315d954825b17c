package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/talaria-agent/talaria/internal/textline"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

// Bounds of what status reads and prints.
const (
	// shownArgs and shownText bound a tool's arguments and a steer or
	// notice on a status line.
	shownArgs = 120
	shownText = 300
)

// argsSummary is a tool call's arguments as a person reads them: the
// command, path, query or URL it names, else the arguments; clipped, on
// one line, control characters made visible. Pure.
func argsSummary(args string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) == nil {
		for _, k := range []string{"command", "path", "query", "url", "question"} {
			if v, ok := m[k].(string); ok {
				return textline.Of(textline.Visible(v), shownArgs)
			}
		}
		if len(m) == 0 {
			return ""
		}
	}
	return textline.Of(textline.Visible(args), shownArgs)
}

// printStatus writes the report as text for session id. Pure.
func printStatus(w io.Writer, id string, r talaria.Status, now time.Time) {
	if r.Goal != nil {
		printGoal(w, id, *r.Goal)
	}
	if r.Turn == nil {
		fmt.Fprintf(w, "session %s: idle\n", id)
	} else {
		printTurn(w, id, r, now)
	}
	printTasks(w, id, r.Tasks)
	for i, q := range r.Session.Queued {
		fmt.Fprintf(w, "  queued %d: %s\n", i+1, textline.Of(textline.Visible(q), shownText))
	}
	if r.UI != "" {
		fmt.Fprintf(w, "  web UI: %s\n", r.UI)
	}
	printKeyPools(w, r.KeyPools)
}

// printTurn writes the running turn: its counters, the step running now,
// its waits, the last notice, what it asks of a person and its steers.
func printTurn(w io.Writer, id string, r talaria.Status, now time.Time) {
	t := r.Turn
	fmt.Fprintf(w, "session %s: running %s — iteration %d, %d left, %d model calls", id, t.TurnID, t.Iteration, t.BudgetLeft, t.APICalls)
	if t.CurrentTool != "" {
		fmt.Fprintf(w, ", running %s", textline.Visible(t.CurrentTool))
	}
	if t.ContextTokens > 0 {
		fmt.Fprintf(w, "; context ~%d tokens", t.ContextTokens)
	}
	if t.Compactions > 0 {
		fmt.Fprintf(w, ", %d compactions (now in %s)", t.Compactions, t.ActiveSessionID)
	}
	fmt.Fprintln(w)
	if line := currentLine(r.Current, r.Waits); line != "" {
		fmt.Fprintln(w, line)
	}
	printWaits(w, r.Waits, now)
	if r.LastNotice != nil && !betweenAttempts(r.Waits) {
		fmt.Fprintf(w, "  last notice, %s ago: %s\n", now.Sub(r.LastNotice.At).Round(time.Second), r.LastNotice.Text)
	}
	printAsks(w, id, t)
	if t.PendingSteers > 0 {
		fmt.Fprintf(w, "  steers pending: %d", t.PendingSteers)
		if len(t.Steers) > 0 {
			fmt.Fprintf(w, " — next: \"%s\"", textline.Of(textline.Visible(t.Steers[0]), shownText))
		}
		fmt.Fprintln(w, " (delivered at the turn's next safe point)")
	}
}

// currentLine is the line of the step running now, e.g. "  model call:
// attempt 1 of 6, running 12s" or "  tool: terminal `make test`, running
// 3m10s"; empty when there is none, or when a wait already shows it (a
// slow or retried attempt). Pure.
func currentLine(c *talaria.CurrentWork, waits []talaria.ActivityWait) string {
	if c == nil {
		return ""
	}
	for _, wt := range waits {
		if wt.NextAttempt == nil && wt.What == c.What {
			return ""
		}
	}
	what := c.What
	if c.What == "tool" {
		what = "tool: " + textline.Visible(c.Tool)
		if a := argsSummary(c.Args); a != "" {
			what += " `" + a + "`"
		}
		what += ","
	} else {
		what += ":"
	}
	attempt := ""
	if c.Attempt > 1 || (c.Attempt == 1 && c.What != "tool") {
		attempt = fmt.Sprintf(" attempt %d", c.Attempt)
		if c.MaxAttempts > 0 {
			attempt += fmt.Sprintf(" of %d", c.MaxAttempts)
		}
		attempt += ","
	}
	return fmt.Sprintf("  %s%s running %s", what, attempt, c.RunningFor)
}

// betweenAttempts reports whether a wait shows a step waiting for its next
// attempt (which says what the last notice would). Pure.
func betweenAttempts(waits []talaria.ActivityWait) bool {
	return slices.ContainsFunc(waits, func(wt talaria.ActivityWait) bool { return wt.NextAttempt != nil })
}

// printAsks writes the approval or question the turn waits on, with the
// exact commands that answer it. Text from the model is made visible.
func printAsks(w io.Writer, id string, t *talaria.Progress) {
	if a := t.PendingApproval; a != nil {
		fmt.Fprintf(w, "  approval needed: %s\n", textline.Visible(a.Command))
		if a.Reason != "" {
			fmt.Fprintf(w, "    reason:  %s\n", textline.Visible(a.Reason))
		}
		fmt.Fprintf(w, "    approve: talaria approve %s   (--session or --always: this same command later too)\n", id)
		fmt.Fprintf(w, "    deny:    talaria deny %s\n", id)
	}
	if q := t.PendingQuestion; q != nil {
		fmt.Fprintf(w, "  question: %s\n", textline.Visible(q.Question))
		for i, c := range q.Choices {
			fmt.Fprintf(w, "    %d. %s\n", i+1, textline.Visible(c))
		}
		fmt.Fprintf(w, "    answer:  talaria answer %s \"YOUR ANSWER\"\n", id)
	}
}

func newStatusCommand() *cobra.Command {
	var format outputFormat
	return controlCommand("status SESSION", "Show what a session is doing",
		`status shows the session's running turn: iteration, budget left, the model call
or tool running now and for how long, what it waits for (a model call's next
attempt and why the last one failed, a call running for a while, the last retry
notice), an approval or question waiting for a person with the commands that
answer it, pending steers, the messages waiting in its queue, and each model
endpoint with several keys: every key by position and digest, ready or cooling
down (rate limited, refused) and for how long.
Exit status 1 for a session the store does not hold.`, 1,
		format.register,
		func(cmd *cobra.Command, cfg config.Config, rt *talaria.Runtime, args []string) error {
			asJSON := format.json()
			r, err := rt.SessionStatus(cmd.Context(), args[0])
			if errors.Is(err, talaria.ErrNoSession) {
				return &exitError{code: exitFailure, err: fmt.Errorf("no session %q (see 'talaria sessions list')", args[0])}
			}
			if err != nil {
				return err
			}
			r.UI = talaria.SessionUILink(cfg.Home, cfg.Temporal.Namespace, args[0])
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), r)
			}
			printStatus(cmd.OutOrStdout(), args[0], r, time.Now())
			return nil
		})
}
