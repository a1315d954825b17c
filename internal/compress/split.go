package compress

import (
	"slices"

	"github.com/talaria-agent/talaria/models"
)

// Defaults used by Split when given non-positive keep counts.
const (
	DefaultKeepFirst = 3
	DefaultKeepLast  = 20
)

// Plan is the result of Split. Head, Middle and Tail concatenated are the
// input, in order.
type Plan struct {
	Head   []models.Message // kept verbatim at the start (the first KeepFirst messages, extended so no tool call is split from its results)
	Middle []models.Message // to be summarised
	Tail   []models.Message // kept verbatim at the end (the last KeepLast, extended backwards so a tool result never starts the tail without its call)
}

// Split divides msgs into a head of the first keepFirst messages (default 3
// when <= 0), a tail of the last keepLast (default 20 when <= 0) and the
// middle between them. Neither boundary ever falls just before a role=tool
// message, nor between an assistant message with tool_calls and any later
// tool result answering one of those calls: the head grows forwards and the
// tail backwards until the boundary is safe. When head and tail meet or
// overlap, Middle is empty and everything after the head is the tail. The
// returned slices are copies.
func Split(msgs []models.Message, keepFirst, keepLast int) Plan {
	if keepFirst <= 0 {
		keepFirst = DefaultKeepFirst
	}
	if keepLast <= 0 {
		keepLast = DefaultKeepLast
	}
	n := len(msgs)
	ok := safeCuts(msgs)

	h := min(keepFirst, n)
	for h < n && !ok[h] {
		h++
	}
	t := n - min(keepLast, n)
	for t > 0 && !ok[t] {
		t--
	}
	if t <= h {
		t = h
	}
	return Plan{
		Head:   slices.Clone(msgs[:h]),
		Middle: slices.Clone(msgs[h:t]),
		Tail:   slices.Clone(msgs[t:]),
	}
}

// safeCuts reports, for each i in [0, len(msgs)], whether a boundary just
// before msgs[i] is safe: msgs[i] is not a tool result, and no tool result at
// or after i answers a call made by an assistant message before i.
func safeCuts(msgs []models.Message) []bool {
	n := len(msgs)
	// blocked[i] > 0 marks cut i unsafe; built as a difference array.
	diff := make([]int, n+2)
	callAt := map[string]int{} // call ID -> index of the latest assistant making it
	for j, m := range msgs {
		if m.Role == "tool" {
			diff[j]++
			diff[j+1]--
			if k, found := callAt[m.ToolCallID]; found && m.ToolCallID != "" {
				// Cuts k+1 .. j would separate call k from result j.
				diff[k+1]++
				diff[j+1]--
			}
		}
		for _, tc := range m.ToolCalls {
			if tc.ID != "" {
				callAt[tc.ID] = j
			}
		}
	}
	ok := make([]bool, n+1)
	run := 0
	for i := 0; i <= n; i++ {
		run += diff[i]
		ok[i] = run == 0
	}
	ok[0], ok[n] = true, true
	return ok
}
