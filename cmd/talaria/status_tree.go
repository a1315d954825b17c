package main

import (
	"context"
	"fmt"
	"io"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/workflows"
)

// taskStatus is a delegated task running now.
type taskStatus struct {
	Session   string `json:"session"`
	TurnID    string `json:"turn_id"`
	Iteration int    `json:"iteration"`
	APICalls  int    `json:"api_calls"`
	// Tool is the tool it runs now ("" between tools).
	Tool string `json:"tool,omitempty"`
	// Approval is the command it waits to have approved.
	Approval string `json:"approval,omitempty"`
}

// runningTasks are the tasks delegated from the sessions named (a turn's
// session and the one the user named) whose turn runs now.
func runningTasks(ctx context.Context, rt *engine.Runtime, sessions ...string) []taskStatus {
	var out []taskStatus
	for _, t := range rt.RunningTasks(ctx, sessions...) {
		ts := taskStatus{Session: t.Session, TurnID: t.TurnID, Iteration: t.Iteration, APICalls: t.APICalls, Tool: t.CurrentTool}
		if t.PendingApproval != nil {
			ts.Approval = t.PendingApproval.Command
		}
		out = append(out, ts)
	}
	return out
}

// printGoal writes where the session's goal or background task stands.
// Pure.
func printGoal(w io.Writer, id string, g workflows.GoalProgress) {
	fmt.Fprintf(w, "session %s: a run of %d turns so far, %d model calls, %d tokens", id, g.TurnCount, g.Iterations, g.Usage.TotalTokens)
	if g.CostUSD > 0 {
		fmt.Fprintf(w, ", $%.4f", g.CostUSD)
	}
	fmt.Fprintln(w)
	if n := len(g.Turns); n > 0 {
		last := g.Turns[n-1]
		line := fmt.Sprintf("  last turn %d: %s", last.Number, last.StopReason)
		if last.Verdict != "" {
			line += " — " + last.Verdict
			if last.Reason != "" {
				line += ": " + clipLine(shown(last.Reason), shownText)
			}
		}
		fmt.Fprintln(w, line)
	}
}

// printTasks writes the delegated tasks of session id running now, one
// line each, and how to answer one that waits for approval. Pure.
func printTasks(w io.Writer, id string, tasks []taskStatus) {
	for _, t := range tasks {
		line := fmt.Sprintf("  └ task %s: iteration %d, %d model calls", t.Session, t.Iteration, t.APICalls)
		if t.Tool != "" {
			line += ", running " + shown(t.Tool)
		}
		if t.Approval != "" {
			line += "; approval needed: " + clipLine(shown(t.Approval), shownArgs)
		}
		fmt.Fprintln(w, line)
		if t.Approval != "" {
			fmt.Fprintf(w, "      approve: talaria approve %s   deny: talaria deny %s\n", id, id)
		}
	}
}
