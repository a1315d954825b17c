package activities

import (
	"strings"
	"testing"

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
		describeCall(&ref, c.args)
		if ref.Risk.Risk != c.risk || ref.Command != c.command {
			t.Errorf("%s: risk %v, shown %q; want %v, %q", c.args, ref.Risk.Risk, ref.Command, c.risk, c.command)
		}
	}
	// A grant for the command in one directory does not cover it in another.
	here, there := turnapi.ToolCallRef{Name: "terminal"}, turnapi.ToolCallRef{Name: "terminal"}
	describeCall(&here, `{"command":"rm -rf ./build"}`)
	describeCall(&there, `{"command":"rm -rf ./build","workdir":"../other"}`)
	if here.Risk.GrantKey() == there.Risk.GrantKey() || !strings.Contains(there.Command, "../other") {
		t.Errorf("the same grant key %q covers both directories", here.Risk.GrantKey())
	}
}

// TestDescribeExecuteCode: a program is assessed as the command that runs
// it, and a person asked sees that command.
func TestDescribeExecuteCode(t *testing.T) {
	cases := []struct {
		args string
		risk turnapi.Risk
		has  string // in what the person is shown, when asked
	}{
		{`{"code":"print(sum(range(10)))"}`, turnapi.RiskSafe, ""},
		{`{"code":"import talaria_tools as t\nprint(t.read_file('a.txt'))"}`, turnapi.RiskSafe, ""},
		{`{"code":"import subprocess\nsubprocess.run(['ls'])"}`, turnapi.RiskDangerous, "python3 -c"},
		{`{"code":"import shutil\nshutil.rmtree('build')"}`, turnapi.RiskDangerous, "rmtree"},
		{`{"code":"require('child_process').execSync('ls')","language":"node"}`, turnapi.RiskDangerous, "node -e"},
		{`{"code":"rm -rf ./build","language":"bash"}`, turnapi.RiskDangerous, "rm -rf ./build"},
		{`{"code":"rm -rf /","language":"bash"}`, turnapi.RiskBlocked, "rm -rf /"},
		{`{"code":"echo hi","language":"bash","workdir":"sub"}`, turnapi.RiskSafe, ""},
	}
	for _, c := range cases {
		ref := turnapi.ToolCallRef{Name: "execute_code"}
		describeCall(&ref, c.args)
		if ref.Risk.Risk != c.risk || !strings.Contains(ref.Command, c.has) {
			t.Errorf("%s: risk %v (%s), shown %q; want %v, showing %q", c.args, ref.Risk.Risk, ref.Risk.Reason, ref.Command, c.risk, c.has)
		}
	}
}
