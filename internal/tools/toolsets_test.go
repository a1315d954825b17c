package tools

import (
	"slices"
	"strings"
	"testing"
)

func TestExpandToolsets(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"read_file", "read_file"},
		{"file", "read_file,write_file,patch,search_files"},
		{"shell,terminal,web", "terminal,process,execute_code,web_fetch,web_search"},
		{"todo,planning", "todo,clarify"},
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
}

// TestToolsetsCoverTheTools: every tool of the default registry is in one
// toolset, and no toolset is named like a tool.
func TestToolsetsCoverTheTools(t *testing.T) {
	names := append(Default().Names(), "memory", "session_search", "send_message", "process")
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
}
