package activities

import (
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/approval"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// TestDescribeTerminalWorkdir: a terminal call's workdir argument is part
// of what approval assesses and of what the person approving sees.
func TestDescribeTerminalWorkdir(t *testing.T) {
	cases := []struct {
		args    string
		risk    turnapi.Risk
		command string // what the person is shown, when asked
	}{
		{`{"command":"ls -la"}`, turnapi.RiskSafe, ""},
		{`{"command":"ls -la","workdir":"/"}`, turnapi.RiskSafe, ""},
		{`{"command":"rm -rf *","workdir":"/"}`, turnapi.RiskBlocked, "cd '/' && rm -rf *"},
		{`{"command":"rm -rf ./build"}`, turnapi.RiskDangerous, "rm -rf ./build"},
		{`{"command":"rm -rf ./build","workdir":"sub"}`, turnapi.RiskDangerous, "cd 'sub' && rm -rf ./build"},
	}
	for _, c := range cases {
		ref := turnapi.ToolCallRef{Name: "terminal"}
		describeCallIn(&ref, c.args, approval.Where{})
		if ref.Risk.Risk != c.risk || ref.Command != c.command {
			t.Errorf("%s: risk %v, shown %q; want %v, %q", c.args, ref.Risk.Risk, ref.Command, c.risk, c.command)
		}
	}
	// A grant for the command in one directory does not cover it in another.
	here, there := turnapi.ToolCallRef{Name: "terminal"}, turnapi.ToolCallRef{Name: "terminal"}
	describeCallIn(&here, `{"command":"rm -rf ./build"}`, approval.Where{})
	describeCallIn(&there, `{"command":"rm -rf ./build","workdir":"../other"}`, approval.Where{})
	if here.Risk.GrantKey() == there.Risk.GrantKey() || !strings.Contains(there.Command, "../other") {
		t.Errorf("the same grant key %q covers both directories", here.Risk.GrantKey())
	}
}

// TestDescribeExecuteCode: a program is assessed as the command that runs
// it, where it runs, and a person asked sees that command. Outside the
// sandbox only a program known to only read runs without asking; inside,
// only what destroys work in the writable roots asks.
func TestDescribeExecuteCode(t *testing.T) {
	cases := []struct {
		args           string
		off, sandboxed turnapi.Risk
		has            string // in what the person is shown, when asked outside
	}{
		{`{"code":"print(sum(range(10)))"}`, turnapi.RiskDangerous, turnapi.RiskSafe, "python3 -c"},
		{`{"code":"import talaria_tools as t\nprint(t.read_file('a.txt'))"}`, turnapi.RiskDangerous, turnapi.RiskSafe, "python3 -c"},
		{`{"code":"import subprocess\nsubprocess.run(['ls'])"}`, turnapi.RiskDangerous, turnapi.RiskSafe, "python3 -c"},
		{`{"code":"import shutil\nshutil.rmtree('build')"}`, turnapi.RiskDangerous, turnapi.RiskSafe, "rmtree"},
		{`{"code":"require('child_process').execSync('ls')","language":"node"}`, turnapi.RiskDangerous, turnapi.RiskSafe, "node -e"},
		{`{"code":"rm -rf ./build","language":"bash"}`, turnapi.RiskDangerous, turnapi.RiskDangerous, "rm -rf ./build"},
		{`{"code":"rm -rf /","language":"bash"}`, turnapi.RiskBlocked, turnapi.RiskBlocked, "rm -rf /"},
		{`{"code":"echo hi","language":"bash","workdir":"sub"}`, turnapi.RiskSafe, turnapi.RiskSafe, ""},
	}
	for _, c := range cases {
		ref := turnapi.ToolCallRef{Name: "execute_code"}
		describeCallIn(&ref, c.args, approval.Where{})
		if ref.Risk.Risk != c.off || !strings.Contains(ref.Command, c.has) {
			t.Errorf("%s outside the sandbox: risk %v (%s), shown %q; want %v, showing %q", c.args, ref.Risk.Risk, ref.Risk.Reason, ref.Command, c.off, c.has)
		}
		in := turnapi.ToolCallRef{Name: "execute_code"}
		describeCallIn(&in, c.args, approval.Where{Sandboxed: true, Writable: true})
		if in.Risk.Risk != c.sandboxed {
			t.Errorf("%s in the sandbox: risk %v (%s), want %v", c.args, in.Risk.Risk, in.Risk.Reason, c.sandboxed)
		}
	}
}
