package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// everythingVersion is the @modelcontextprotocol/server-everything the
// MCP tests run.
const everythingVersion = "2026.8.31"

// everythingServer installs @modelcontextprotocol/server-everything from
// npm (once, into the user's cache) and returns its entry point; without
// Node the test is skipped, saying so.
func everythingServer(t *testing.T) string {
	t.Helper()
	for _, bin := range []string{"node", "npm"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed: the MCP tests need Node.js to run @modelcontextprotocol/server-everything", bin)
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "talaria-test", "server-everything-"+everythingVersion)
	entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(entry); err == nil {
		return entry
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t.Logf("installing @modelcontextprotocol/server-everything@%s into %s", everythingVersion, dir)
	out, err := exec.CommandContext(ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel", "error",
		"@modelcontextprotocol/server-everything@"+everythingVersion).CombinedOutput()
	if err != nil {
		t.Fatalf("npm install @modelcontextprotocol/server-everything: %v\n%s", err, out)
	}
	return entry
}

// TestMCPEverything: the tools of a real MCP server (stdio) are offered
// as mcp_everything_<tool> and called in a turn; the server gets the
// tools' environment, not the worker's secrets; when it crashes, the next
// call says so clearly and the one after starts it again.
func TestMCPEverything(t *testing.T) {
	entry := everythingServer(t)
	model := fakellm.New(
		fakellm.ToolStep(
			fakellm.ToolCall{ID: "e1", Name: "mcp_everything_echo", Arguments: `{"message":"hello from talaria"}`},
			fakellm.ToolCall{ID: "s1", Name: "mcp_everything_get-sum", Arguments: `{"a":2,"b":3}`},
			fakellm.ToolCall{ID: "v1", Name: "mcp_everything_get-env", Arguments: `{}`},
		),
		fakellm.TextStep("2 + 3 = 5"),
		fakellm.ToolStep(fakellm.ToolCall{ID: "e2", Name: "mcp_everything_echo", Arguments: `{"message":"are you there"}`}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "e3", Name: "mcp_everything_echo", Arguments: `{"message":"again"}`}),
		fakellm.TextStep("It is back."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	writeConfig(fmt.Sprintf("mcp_servers:\n  everything:\n    command: node\n    args: [%q, stdio]\n    timeout: 20s\n    tools:\n      exclude: [trigger-long-running-operation]\n", entry))(t, u)
	u.env["OPENAI_API_KEY"] = "sk-secret-of-the-worker"
	u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")

	// The server's toolset narrows the turn's tools to its own and read_file.
	if res, stderr, code := u.chatJSON(3*time.Minute, "-q", "add 2 and 3", "--session", "mcp", "--tools", "mcp:everything,read_file"); code != 0 || !res.Completed {
		t.Fatalf("exit %d %+v\n%s", code, res, stderr)
	}
	var offered []string
	for _, tl := range model.Requests()[0].Body.Tools {
		offered = append(offered, tl.Function.Name)
		if !strings.HasPrefix(tl.Function.Name, "mcp_everything_") && tl.Function.Name != "read_file" {
			t.Errorf("--tools mcp:everything,read_file offered %s", tl.Function.Name)
		}
	}
	joined := strings.Join(offered, ",")
	if !strings.Contains(joined, "mcp_everything_echo") || !strings.Contains(joined, "mcp_everything_get-sum") ||
		strings.Contains(joined, "trigger-long-running-operation") || !strings.Contains(joined, "read_file") {
		t.Errorf("offered tools: %s", joined)
	}
	if _, stderr, code := u.run(time.Minute, "chat", "-q", "hi", "--tools", "mcp:nosuch"); code != 2 || !strings.Contains(stderr, `"mcp:nosuch": no such MCP server in mcp_servers (configured: everything)`) {
		t.Errorf("--tools mcp:nosuch: exit %d %q", code, stderr)
	}
	results := toolResults(model)
	if !strings.Contains(results["e1"], "Echo: hello from talaria") || !strings.Contains(results["s1"], "The sum of 2 and 3 is 5.") {
		t.Errorf("results: %q / %q", results["e1"], results["s1"])
	}
	if strings.Contains(results["v1"], "sk-secret-of-the-worker") || !strings.Contains(results["v1"], "PATH") {
		t.Errorf("the server's environment: %s", results["v1"])
	}

	// The server crashes between two turns.
	if out, err := exec.Command("pkill", "-KILL", "-f", entry).CombinedOutput(); err != nil {
		t.Fatalf("pkill the MCP server: %v %s", err, out)
	}
	waitFor(t, time.Minute, func() bool { return exec.Command("pgrep", "-f", entry).Run() != nil }) // the server is gone
	if res, stderr, code := u.chatJSON(3*time.Minute, "-q", "still there?", "--session", "mcp"); code != 0 || !res.Completed {
		t.Fatalf("exit %d %+v\n%s", code, res, stderr)
	}
	results = toolResults(model)
	if !strings.Contains(results["e2"], "MCP server unavailable: everything") || !strings.Contains(results["e2"], "the next call starts it again") {
		t.Errorf("the call after the crash: %q", results["e2"])
	}
	if !strings.Contains(results["e3"], "Echo: again") {
		t.Errorf("the call after that: %q", results["e3"])
	}
}

// TestMCPCommands: talaria mcp list shows a server's tools; mcp test
// exits 1 for a server that cannot start, 2 for one not configured.
func TestMCPCommands(t *testing.T) {
	entry := everythingServer(t)
	u := newUser(t, "http://127.0.0.1:1/v1")
	writeConfig(fmt.Sprintf("mcp_servers:\n  everything:\n    command: node\n    args: [%q]\n  broken:\n    command: /nonexistent/mcp-server\n", entry))(t, u)
	out, stderr, code := u.run(2*time.Minute, "mcp", "list")
	if code != 0 || !strings.Contains(out, "mcp_everything_echo — ") || !strings.Contains(out, "broken: unavailable: MCP server unavailable") {
		t.Errorf("mcp list: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = u.run(2*time.Minute, "tools")
	if code != 0 || !strings.Contains(out, "mcp_everything_get-sum") || !strings.Contains(out, "mcp:everything") ||
		!strings.Contains(stderr, "MCP server broken: MCP server unavailable") {
		t.Errorf("tools with MCP servers: exit %d\n%s%s", code, out, stderr)
	}
	if _, stderr, code := u.run(time.Minute, "mcp", "test", "broken"); code != 1 || !strings.Contains(stderr, "MCP server broken cannot be reached") {
		t.Errorf("mcp test broken: exit %d %s", code, stderr)
	}
	if _, stderr, code := u.run(time.Minute, "mcp", "test", "nosuch"); code != 2 || !strings.Contains(stderr, `no MCP server "nosuch"`) {
		t.Errorf("mcp test nosuch: exit %d %s", code, stderr)
	}
}
