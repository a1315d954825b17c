package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// Bounds of what status reads and prints.
const (
	// eventsPage and maxEventPages bound the scan of a turn's live events
	// (the tool running now, the last notice).
	eventsPage    = 500
	maxEventPages = 100
	// shownArgs and shownText bound a tool's arguments and a steer or
	// notice on a status line.
	shownArgs = 120
	shownText = 300
)

// statusReport is what `talaria status SESSION` shows; its JSON keys are
// snake_case.
type statusReport struct {
	Session workflows.SessionState `json:"session"`
	// Turn is the running turn's progress (none when idle).
	Turn *workflows.Progress `json:"turn,omitempty"`
	// Waits are its steps between attempts or running for a while.
	Waits []activityWait `json:"waits,omitempty"`
	// Current is the model call or tool running now.
	Current *currentWork `json:"current,omitempty"`
	// LastNotice is the turn's last wait notice (a retry, a slow model).
	LastNotice *turnNotice `json:"last_notice,omitempty"`
	// Goal is the progress of the goal or background task run in the
	// session (talaria run), when there is one.
	Goal *workflows.GoalProgress `json:"goal,omitempty"`
	// Tasks are the delegated tasks of the session running now.
	Tasks []taskStatus `json:"tasks,omitempty"`
	// UI opens the session's turns in serve's Web UI (with its token).
	UI string `json:"ui,omitempty"`
	// KeyPools are the session's model endpoints that have several keys,
	// each key ready or cooling down.
	KeyPools []keyPoolStatus `json:"key_pools,omitempty"`
}

// currentWork is the step of a turn running now.
type currentWork struct {
	// What is "model call", "tool", "compaction" or the activity's name.
	What string `json:"what"`
	// Tool and Args name the tool running (tool only).
	Tool string `json:"tool,omitempty"`
	Args string `json:"args,omitempty"`
	// Attempt is the activity's attempt (0 for a quick tool batch run in
	// the workflow's worker); MaxAttempts is 0 when unbounded.
	Attempt     int32     `json:"attempt,omitempty"`
	MaxAttempts int32     `json:"max_attempts,omitempty"`
	StartedAt   time.Time `json:"started_at"`
	// RunningFor is how long it has run, e.g. "3m10s".
	RunningFor string `json:"running_for"`
}

// turnNotice is a wait event of the turn: a retry's notice, a slow model.
type turnNotice struct {
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

// toolRun is a tool call that started and has not ended.
type toolRun struct {
	activities.ToolEvent
	At time.Time
}

// turnEvents is what status learns from a turn's live events.
type turnEvents struct {
	open   map[string]toolRun
	notice *turnNotice
}

// add takes in one event, in order. Pure.
func (te *turnEvents) add(ev models.Event) {
	switch ev.Kind {
	case events.KindToolStart, events.KindToolEnd:
		var t activities.ToolEvent
		if json.Unmarshal([]byte(ev.Data), &t) != nil {
			return
		}
		if te.open == nil {
			te.open = map[string]toolRun{}
		}
		if ev.Kind == events.KindToolStart {
			te.open[t.ID] = toolRun{ToolEvent: t, At: ev.At}
		} else {
			delete(te.open, t.ID)
		}
	case events.KindWait:
		te.notice = &turnNotice{Text: clipLine(shown(ev.Data), shownText), At: ev.At}
	}
}

// running is the tool started last among those still running. Pure.
func (te *turnEvents) running() *toolRun {
	var last *toolRun
	for _, r := range te.open {
		if last == nil || r.At.After(last.At) {
			last = &r
		}
	}
	return last
}

// scanTurnEvents reads a turn's live events (at most maxEventPages pages).
func scanTurnEvents(ctx context.Context, store *models.Store, turnID string) (turnEvents, error) {
	var te turnEvents
	var after int64
	for range maxEventPages {
		evs, err := store.EventsAfter(ctx, turnID, after, eventsPage)
		if err != nil {
			return te, fmt.Errorf("read the events of turn %s: %w", turnID, err)
		}
		for _, ev := range evs {
			te.add(ev)
		}
		if len(evs) < eventsPage {
			break
		}
		after = evs[len(evs)-1].ID
	}
	return te, nil
}

// describeCurrent is the step running now: the started activity Temporal
// reports (a tool batch named by the tool running in it), or a quick tool
// batch that runs without one. Nothing while the turn waits for a person:
// status shows what it waits for instead. Pure.
func describeCurrent(p *workflows.Progress, pending []*workflowpb.PendingActivityInfo, tool *toolRun, now time.Time) *currentWork {
	if p == nil || p.PendingApproval != nil || p.PendingQuestion != nil {
		return nil
	}
	for _, a := range pending {
		started := a.GetLastStartedTime()
		if a.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED || started == nil {
			continue
		}
		name := a.GetActivityType().GetName()
		c := &currentWork{What: activityLabel(name), Attempt: a.GetAttempt(), MaxAttempts: a.GetMaximumAttempts(), StartedAt: started.AsTime()}
		if f := a.GetLastFailure(); f != nil && a.GetAttempt() > 1 {
			c.MaxAttempts = classLimit(c.MaxAttempts, f.GetApplicationFailureInfo().GetType())
		}
		if name == turnapi.ExecuteToolsName {
			c.What, c.Tool = "tool", p.CurrentTool
			if tool != nil {
				c.Tool, c.Args = tool.Name, tool.Args
				if tool.At.After(c.StartedAt) {
					c.StartedAt = tool.At
				}
			}
		}
		c.RunningFor = now.Sub(c.StartedAt).Round(time.Second).String()
		return c
	}
	if tool != nil && p.CurrentTool != "" {
		return &currentWork{What: "tool", Tool: tool.Name, Args: tool.Args, StartedAt: tool.At,
			RunningFor: now.Sub(tool.At).Round(time.Second).String()}
	}
	return nil
}

// argsSummary is a tool call's arguments as a person reads them: the
// command, path, query or URL it names, else the arguments; clipped, on
// one line, control characters made visible. Pure.
func argsSummary(args string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) == nil {
		for _, k := range []string{"command", "path", "query", "url", "question"} {
			if v, ok := m[k].(string); ok {
				return clipLine(shown(v), shownArgs)
			}
		}
		if len(m) == 0 {
			return ""
		}
	}
	return clipLine(shown(args), shownArgs)
}

// printStatus writes the report as text for session id. Pure.
func printStatus(w io.Writer, id string, r statusReport, now time.Time) {
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
		fmt.Fprintf(w, "  queued %d: %s\n", i+1, clipLine(shown(q), shownText))
	}
	if r.UI != "" {
		fmt.Fprintf(w, "  web UI: %s\n", r.UI)
	}
	printKeyPools(w, r.KeyPools)
}

// printTurn writes the running turn: its counters, the step running now,
// its waits, the last notice, what it asks of a person and its steers.
func printTurn(w io.Writer, id string, r statusReport, now time.Time) {
	t := r.Turn
	fmt.Fprintf(w, "session %s: running %s — iteration %d, %d left, %d model calls", id, t.TurnID, t.Iteration, t.BudgetLeft, t.APICalls)
	if t.CurrentTool != "" {
		fmt.Fprintf(w, ", running %s", shown(t.CurrentTool))
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
			fmt.Fprintf(w, " — next: \"%s\"", clipLine(shown(t.Steers[0]), shownText))
		}
		fmt.Fprintln(w, " (delivered at the turn's next safe point)")
	}
}

// currentLine is the line of the step running now, e.g. "  model call:
// attempt 1 of 6, running 12s" or "  tool: terminal `make test`, running
// 3m10s"; empty when there is none, or when a wait already shows it (a
// slow or retried attempt). Pure.
func currentLine(c *currentWork, waits []activityWait) string {
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
		what = "tool: " + shown(c.Tool)
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
func betweenAttempts(waits []activityWait) bool {
	for _, wt := range waits {
		if wt.NextAttempt != nil {
			return true
		}
	}
	return false
}

// printAsks writes the approval or question the turn waits on, with the
// exact commands that answer it. Text from the model is made visible.
func printAsks(w io.Writer, id string, t *workflows.Progress) {
	if a := t.PendingApproval; a != nil {
		fmt.Fprintf(w, "  approval needed: %s\n", shown(a.Command))
		if a.Reason != "" {
			fmt.Fprintf(w, "    reason:  %s\n", shown(a.Reason))
		}
		fmt.Fprintf(w, "    approve: talaria approve %s   (--session or --always: this same command later too)\n", id)
		fmt.Fprintf(w, "    deny:    talaria deny %s\n", id)
	}
	if q := t.PendingQuestion; q != nil {
		fmt.Fprintf(w, "  question: %s\n", shown(q.Question))
		for i, c := range q.Choices {
			fmt.Fprintf(w, "    %d. %s\n", i+1, shown(c))
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
		func(cmd *cobra.Command, cfg config.Config, rt *engine.Runtime, args []string) error {
			asJSON, err := format.json()
			if err != nil {
				return err
			}
			r, err := sessionStatus(cmd.Context(), rt, args[0])
			if err != nil {
				return err
			}
			r.UI = sessionUILink(cfg.Home, cfg.Temporal.Namespace, args[0])
			r.KeyPools = keyPools(cmd.Context(), cfg, rt.Store, args[0], time.Now())
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), r)
			}
			printStatus(cmd.OutOrStdout(), args[0], r, time.Now())
			return nil
		})
}

// sessionStatus gathers a session's report: its coordinator's state, and
// for a running turn its progress, Temporal's view of its activities and
// its live events. Only the coordinator's state is required.
func sessionStatus(ctx context.Context, rt *engine.Runtime, id string) (statusReport, error) {
	var r statusReport
	st, err := rt.SessionState(ctx, id)
	if isNotFound(err) {
		if !sessionKnown(ctx, rt, id) {
			return r, &exitError{code: exitFailure, err: fmt.Errorf("no session %q (see 'talaria sessions list')", id)}
		}
		st, err = workflows.SessionState{SessionID: id, Queued: []string{}}, nil
	}
	if err != nil {
		return r, err
	}
	r.Session = st
	running := st.Running
	if g, err := rt.GoalProgress(ctx, id); err == nil {
		r.Goal = &g
		if running == "" {
			running = g.Running // a goal's turns run under it, not the coordinator
		}
	}
	if running == "" {
		return r, nil
	}
	p, err := rt.Progress(ctx, running)
	if err != nil {
		return r, nil // the turn ended meanwhile: idle
	}
	r.Turn = &p
	now := time.Now()
	pending, _ := pendingActivities(ctx, rt.Client, running)
	r.Waits = describeWaits(pending, now)
	var te turnEvents
	if rt.Store != nil {
		te, _ = scanTurnEvents(ctx, rt.Store, running)
		r.Tasks = runningTasks(ctx, rt, p.ActiveSessionID, id)
	}
	r.Current = describeCurrent(&p, pending, te.running(), now)
	r.LastNotice = te.notice
	return r, nil
}
