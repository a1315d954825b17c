package mcp

import (
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/talaria-agent/talaria/config"
)

func TestToolName(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ server, tool, want string }{
		{"everything", "echo", "mcp_everything_echo"},
		{"everything", "get-sum", "mcp_everything_get-sum"},
		{"fs", "read file/v2", "mcp_fs_read_file_v2"},
		{"x", "ünïcode", "mcp_x__n_code"},
		{"long", string(make([]byte, 100)), "mcp_long_" + strings.Repeat("_", 55)},
	} {
		if got := ToolName(tt.server, tt.tool); got != tt.want || len(got) > maxNameLen {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
	}
}

func TestKeep(t *testing.T) {
	t.Parallel()
	var srv config.MCPServer
	if !keep(srv, "echo") {
		t.Error("no lists: every tool is kept")
	}
	srv.Tools.Include = []string{"echo", "get-sum"}
	srv.Tools.Exclude = []string{"get-sum"}
	for tool, want := range map[string]bool{"echo": true, "get-sum": false, "get-env": false} {
		if keep(srv, tool) != want {
			t.Errorf("keep(%s) = %v", tool, !want)
		}
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	res := &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.TextContent{Text: "Echo: hi"},
		&sdk.ImageContent{MIMEType: "image/png", Data: []byte{1, 2, 3}},
		&sdk.ResourceLink{Name: "readme", URI: "file:///r"},
	}}
	if got := render(res); got != "Echo: hi\n[image image/png, 3 bytes]\n[resource readme: file:///r]" {
		t.Errorf("render = %q", got)
	}
	structured := &sdk.CallToolResult{StructuredContent: map[string]any{"sum": 5}}
	if got := render(structured); got != `{"sum":5}` {
		t.Errorf("render structured = %q", got)
	}
}
