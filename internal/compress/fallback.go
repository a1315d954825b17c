package compress

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/talaria-agent/talaria/models"
)

// fallbackTaskChars limits the task statement copied into FallbackSummary.
const fallbackTaskChars = 2000

// FallbackSummary is the static summary used when the summariser fails. It
// has the header and every section: Active Task and Goal hold the first user
// message of head followed by middle (compaction summaries excluded, clipped
// to about 2,000 characters), so the task is never lost; Completed Actions
// lists the tool calls made in middle by name, in first-use order, with
// their counts; Critical Context says the summary was generated without a
// model. The result is already in NormalizeSummary's form.
func FallbackSummary(head, middle []models.Message) string {
	task := ""
	for _, part := range [][]models.Message{head, middle} {
		for _, m := range part {
			if task == "" && m.Role == "user" && strings.TrimSpace(m.Content) != "" && !IsSummary(m.Content) {
				task = strings.TrimSpace(clip(m.Content, fallbackTaskChars))
			}
		}
	}
	task = cmp.Or(task, "(unknown: no user message in the compacted range)")

	var order []string
	counts := map[string]int{}
	for _, m := range middle {
		for _, tc := range m.ToolCalls {
			name := cmp.Or(strings.TrimSpace(tc.Function.Name), "(unnamed tool)")
			if counts[name] == 0 {
				order = append(order, name)
			}
			counts[name]++
		}
	}
	var actions strings.Builder
	for i, name := range order {
		if i > 0 {
			actions.WriteString("\n")
		}
		unit := "calls"
		if counts[name] == 1 {
			unit = "call"
		}
		fmt.Fprintf(&actions, "- %s (%d %s)", name, counts[name], unit)
	}

	fill := map[string]string{
		"Active Task":       task,
		"Goal":              task,
		"Completed Actions": actions.String(),
		"Critical Context": fmt.Sprintf("- This summary was generated without a model after summarisation failed; "+
			"details of %d earlier messages were dropped. Re-check state (files, command output) before relying on it.", len(middle)),
	}
	return renderSummary("", func(i int) string { return fill[Sections[i]] })
}
