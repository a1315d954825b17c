package engine

import (
	"slices"
	"testing"
)

// TestToolNames: the names a job may list are every tool a worker offers,
// sorted, and tools.enabled accepts each of them.
func TestToolNames(t *testing.T) {
	names := ToolNames()
	want := []string{"clarify", "execute_code", "memory", "patch", "process", "read_file", "search_files", "send_message", "session_search", "skill_manage", "skill_view", "skills_list", "terminal", "todo", "web_fetch", "write_file"}
	if !slices.Equal(names, want) {
		t.Fatalf("ToolNames() = %v, want %v", names, want)
	}
	offered, err := enabledTools(names, nil, builtinTools("", nil, nil, nil)...)
	if err != nil || len(offered) != len(want) {
		t.Fatalf("enabledTools(all names) = %d tools, %v", len(offered), err)
	}
}
