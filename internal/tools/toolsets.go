package tools

import (
	"slices"
	"sort"
)

// toolsets group the built-in tools by what they touch (named apart from
// every tool); a toolset's name stands for its tools wherever a list of tools is given (tools.enabled,
// tools.disabled, cron --tools, chat --tools).
var toolsets = map[string][]string{
	"file":     {"read_file", "write_file", "patch", "search_files"},
	"shell":    {"terminal", "process", "execute_code"},
	"web":      {"web_fetch", "web_search"},
	"recall":   {"memory", "session_search"},
	"skills":   {"skills_list", "skill_view", "skill_manage"},
	"planning": {"todo", "clarify"},
	"messages": {"send_message"},
}

// ToolsetOf names the toolset of a built-in tool ("" for none).
func ToolsetOf(tool string) string {
	for name, members := range toolsets {
		if slices.Contains(members, tool) {
			return name
		}
	}
	return ""
}

// ToolsetNames are the toolsets' names, sorted.
func ToolsetNames() []string {
	names := make([]string, 0, len(toolsets))
	for n := range toolsets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ExpandToolsets replaces each toolset name in names by its tools, keeping
// other names as they are and dropping repeats, in order. Pure.
func ExpandToolsets(names []string) []string {
	var out []string
	add := func(n string) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, n := range names {
		if members, ok := toolsets[n]; ok {
			for _, m := range members {
				add(m)
			}
			continue
		}
		add(n)
	}
	return out
}

// approvals say what a built-in tool may do without asking.
var approvals = map[string]string{
	"terminal":     "dangerous commands ask (approvals.mode); blocked ones never run",
	"process":      "a start is assessed as a terminal command",
	"execute_code": "the program is assessed as a terminal command; its own terminal calls run only if safe",
	"write_file":   "paths checked: working directory and write roots only",
	"patch":        "paths checked: working directory and write roots only",
	"web_fetch":    "non-public addresses refused unless web.allow_private",
	"web_search":   "queries go to the configured search service (web.search)",
	"send_message": "home or this chat only",
	"skill_manage": "writes checked and scanned",
	"memory":       "entries scanned",
}

// ApprovalOf says what bounds a built-in tool or makes it ask ("-": it
// only reads within the read rules, or asks the user itself).
func ApprovalOf(tool string) string {
	if a, ok := approvals[tool]; ok {
		return a
	}
	return "-"
}
