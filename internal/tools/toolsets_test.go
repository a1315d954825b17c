package tools

import (
	"slices"
	"strings"
	"testing"
)

// TestExpandToolsets: a toolset stands for its tools (those that declare
// it, by name) where it appears, other names stay, repeats go.
func TestExpandToolsets(t *testing.T) {
	t.Parallel()
	members := func(set string) string {
		var out []string
		for _, n := range BuiltinNames() {
			if ToolsetOf(n) == set {
				out = append(out, n)
			}
		}
		return strings.Join(out, ",")
	}
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"read_file", "read_file"},
		{"file", members("file")},
		{"shell,terminal,web", members("shell") + "," + members("web")},
		{"todo,planning", "todo," + strings.Trim(strings.ReplaceAll(","+members("planning")+",", ",todo,", ","), ",")},
		{"nosuch", "nosuch"},
	} {
		var in []string
		if tt.in != "" {
			in = strings.Split(tt.in, ",")
		}
		if got := strings.Join(ExpandToolsets(in), ","); got != tt.want {
			t.Errorf("ExpandToolsets(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	for _, core := range []string{"read_file", "write_file", "patch", "search_files"} {
		if !strings.Contains(","+members("file")+",", ","+core+",") {
			t.Errorf("the file toolset lacks %s: %s", core, members("file"))
		}
	}
}

// TestToolsetsCoverTheTools: every built-in tool is in one toolset, no
// toolset is named like a tool, and the toolsets are listed in their order.
func TestToolsetsCoverTheTools(t *testing.T) {
	t.Parallel()
	names := BuiltinNames()
	for _, n := range names {
		if ToolsetOf(n) == "" {
			t.Errorf("%s is in no toolset", n)
		}
	}
	for _, s := range ToolsetNames() {
		if slices.Contains(names, s) {
			t.Errorf("the toolset %s is named like a tool", s)
		}
	}
	if got := strings.Join(ToolsetNames(), ","); got != "planning,file,shell,web,recall,skills,messages,delegation" {
		t.Errorf("ToolsetNames() = %s", got)
	}
}

// TestGuidance: the prompt's guidance holds the sentence of each offered
// built-in tool that has one, once, in toolset order, and none for a tool
// it does not know.
func TestGuidance(t *testing.T) {
	t.Parallel()
	got := Guidance([]string{"terminal", "mcp_docs_search", "read_file", "todo", "read_file", "skills_list"})
	want := []string{builtinMeta()["todo"].Guidance, builtinMeta()["read_file"].Guidance, builtinMeta()["terminal"].Guidance}
	if !slices.Equal(got, want) {
		t.Errorf("Guidance = %q, want %q", got, want)
	}
	// The whole guidance, in the order the prompt gives it.
	var order []string
	for _, sentence := range Guidance(BuiltinNames()) {
		for _, n := range BuiltinNames() {
			if builtinMeta()[n].Guidance == sentence {
				order = append(order, n)
			}
		}
	}
	if want := []string{"todo", "read_file", "write_file", "patch", "search_files", "terminal", "web_fetch", "clarify", "memory", "delegate_task", "execute_code"}; !slices.Equal(order[:len(want)], want) {
		t.Errorf("guidance in the order of %v, want %v first", order, want)
	}
	if got := Guidance(nil); got != nil {
		t.Errorf("Guidance(nil) = %q", got)
	}
}

// TestMCPNames: an MCP server's toolset allows its tools and no other
// server's; MCP names find their configured server.
func TestMCPNames(t *testing.T) {
	for _, tt := range []struct {
		list []string
		name string
		ok   bool
	}{
		{nil, "anything", true},
		{[]string{"read_file"}, "read_file", true},
		{[]string{"read_file"}, "mcp_docs_search", false},
		{[]string{"mcp:docs"}, "mcp_docs_search", true},
		{[]string{"mcp:docs"}, "mcp_docs2_search", false},
		{[]string{"mcp:my server"}, "mcp_my_server_x", true},
		{[]string{"mcp:"}, "mcp__x", false},
		{[]string{"mcp_docs_search"}, "mcp_docs_search", true},
	} {
		if got := Allows(tt.list, tt.name); got != tt.ok {
			t.Errorf("Allows(%q, %q) = %v", tt.list, tt.name, got)
		}
	}
	servers := []string{"docs", "docs_v2", "git"}
	for name, want := range map[string]string{"mcp:git": "git", "mcp_docs_v2_find": "docs_v2", "mcp_docs_find": "docs", "mcp:nope": "", "mcp_nope_x": "", "read_file": ""} {
		if got := MCPServerOf(name, servers); got != want {
			t.Errorf("MCPServerOf(%q) = %q, want %q", name, got, want)
		}
	}
	for name, want := range map[string]bool{"mcp:git": true, "mcp_x": true, "mcp_": false, "mcp:": false, "web": false} {
		if IsMCPName(name) != want {
			t.Errorf("IsMCPName(%q) = %v", name, !want)
		}
	}
}
