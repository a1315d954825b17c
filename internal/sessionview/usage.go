package sessionview

import (
	"context"
	"fmt"

	"github.com/talaria-agent/talaria/internal/modelinfo"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// Usage is one line on what a session has used: its turns, tokens and
// what its model calls cost, as a chat's or an editor's /usage answers.
func Usage(ctx context.Context, st *models.Store, session string) (string, error) {
	turns, err := st.Turns(ctx, session)
	if err != nil {
		return "", err
	}
	var prompt, completion int64
	for _, t := range turns {
		prompt, completion = prompt+t.PromptTokens, completion+t.CompletionTokens
	}
	text := fmt.Sprintf("This session: %d turns, %d prompt and %d completion tokens.", len(turns), prompt, completion)
	rows, err := st.Usage(ctx, models.UsageFilter{SessionID: session})
	if err != nil {
		return "", err
	}
	return text + usageCost(rows), nil
}

// usageCost tells what a session's model calls cost and how much of their
// input a prompt cache served ("" when nothing is recorded). Pure.
func usageCost(rows []models.UsageRow) string {
	var calls, unpriced, prompt, cached int64
	var cost float64
	for _, r := range rows {
		calls, unpriced, prompt, cached = calls+r.Calls, unpriced+r.Unpriced, prompt+r.PromptTokens, cached+r.CacheReadTokens
		cost += r.CostUSD
	}
	if calls == 0 {
		return ""
	}
	text := fmt.Sprintf(" Cost: %s for %s", modelinfo.FormatUSD(cost), plural(calls, "model call"))
	switch {
	case unpriced == calls:
		text = fmt.Sprintf(" Cost: unknown for %s (no price is known for the model: models: in config.yaml sets one)", plural(calls, "model call"))
	case unpriced > 0:
		text += fmt.Sprintf(" (%d without a known price)", unpriced)
	}
	if cached > 0 && prompt > 0 {
		text += fmt.Sprintf("; %d%% of the input came from the prompt cache", cached*100/prompt)
	}
	return text + "."
}

// plural is "1 thing" or "n things". Pure.
func plural(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// Running is one line on what a running turn is doing: its iteration, the
// tool it runs and the approval it waits on. Pure.
func Running(pr workflows.Progress) string {
	answer := fmt.Sprintf("Running: iteration %d, %d left", pr.Iteration, pr.BudgetLeft)
	if pr.CurrentTool != "" {
		answer += ", now " + pr.CurrentTool
	}
	if pr.PendingApproval != nil {
		answer += "; waiting for your approval of: " + pr.PendingApproval.Command
	}
	return answer
}
