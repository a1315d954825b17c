package tools

import (
	"maps"
	"slices"
	"strings"
)

// ToolsetOf names the toolset of a built-in tool ("" for none). A toolset's
// name stands for its tools wherever a list of tools is given
// (tools.enabled, tools.disabled, cron --tools, chat --tools); each tool
// names its toolset in its Meta.
func ToolsetOf(tool string) string {
	return builtinMeta()[tool].Toolset
}

// ToolsetNames are the toolsets' names, in the order they are listed in.
func ToolsetNames() []string {
	names := slices.Collect(maps.Keys(toolsets()))
	slices.SortFunc(names, toolsetRank)
	return names
}

// ExpandToolsets replaces each toolset name in names by its tools (by
// name), keeping other names as they are and dropping repeats, in order.
func ExpandToolsets(names []string) []string {
	sets := toolsets()
	var out []string
	add := func(n string) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, n := range names {
		if members, ok := sets[n]; ok {
			for _, m := range members {
				add(m)
			}
			continue
		}
		add(n)
	}
	return out
}

// ApprovalOf says what bounds a built-in tool or makes it ask ("-": it
// only reads within the read rules, or asks the user itself).
func ApprovalOf(tool string) string {
	if a := builtinMeta()[tool].Approval; a != "" {
		return a
	}
	return "-"
}

// MCP names: an MCP server's tool is offered as mcp_<server>_<tool>, and
// "mcp:<server>" is the toolset of all of a server's tools.
const (
	mcpToolPrefix    = "mcp_"
	mcpToolsetPrefix = "mcp:"
)

// FunctionName replaces the characters a function name cannot hold (all
// but letters, digits, '_' and '-') by '_'. Pure.
func FunctionName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// MCPToolset is the toolset name of an MCP server's tools.
func MCPToolset(server string) string { return mcpToolsetPrefix + server }

// MCPServerOf is the configured server an MCP tool name (mcp_<server>_<tool>)
// or toolset (mcp:<server>) refers to; "" when name is neither or names
// no server of servers. Pure.
func MCPServerOf(name string, servers []string) string {
	best := ""
	for _, s := range servers {
		switch {
		case name == mcpToolsetPrefix+s:
			return s
		case strings.HasPrefix(name, FunctionName(mcpToolPrefix+s+"_")) && len(s) > len(best):
			best = s
		}
	}
	return best
}

// IsMCPName reports whether name has the shape of an MCP tool's name or
// of an MCP server's toolset. Pure.
func IsMCPName(name string) bool {
	return strings.HasPrefix(name, mcpToolPrefix) && len(name) > len(mcpToolPrefix) ||
		strings.HasPrefix(name, mcpToolsetPrefix) && len(name) > len(mcpToolsetPrefix)
}

// Allows reports whether a turn's tool list allows the tool named name: an
// empty list allows every tool; otherwise the list names the tool, or the
// toolset mcp:<server> of the MCP server it comes from. Pure.
func Allows(list []string, name string) bool {
	if len(list) == 0 {
		return true
	}
	for _, entry := range list {
		if entry == name {
			return true
		}
		if server, ok := strings.CutPrefix(entry, mcpToolsetPrefix); ok && server != "" &&
			strings.HasPrefix(name, FunctionName(mcpToolPrefix+server+"_")) {
			return true
		}
	}
	return false
}
