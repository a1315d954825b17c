package main

import (
	"fmt"
	"io"

	"github.com/talaria-agent/talaria"

	"github.com/talaria-agent/talaria/internal/textline"
)

// printGoal writes where the session's goal or background task stands.
// Pure.
func printGoal(w io.Writer, id string, g talaria.GoalProgress) {
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
				line += ": " + textline.Of(textline.Visible(last.Reason), shownText)
			}
		}
		fmt.Fprintln(w, line)
	}
}

// printTasks writes the delegated tasks of session id running now, one
// line each, and how to answer one that waits for approval. Pure.
func printTasks(w io.Writer, id string, tasks []talaria.TaskStatus) {
	for _, t := range tasks {
		line := fmt.Sprintf("  └ task %s: iteration %d, %d model calls", t.Session, t.Iteration, t.APICalls)
		if t.Tool != "" {
			line += ", running " + textline.Visible(t.Tool)
		}
		if t.Approval != "" {
			line += "; approval needed: " + textline.Of(textline.Visible(t.Approval), shownArgs)
		}
		fmt.Fprintln(w, line)
		if t.Approval != "" {
			fmt.Fprintf(w, "      approve: talaria approve %s   deny: talaria deny %s\n", id, id)
		}
	}
}
