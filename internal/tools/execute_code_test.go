package tools

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// codeTool is execute_code with the tools a program may call.
func codeTool(t *testing.T) ExecuteCodeTool {
	t.Helper()
	all, err := WithCodeTools([]Tool{ReadFile, WriteFile, Terminal, Todo, ExecuteCodeTool{}})
	if err != nil {
		t.Fatal(err)
	}
	code, ok := all[4].(ExecuteCodeTool)
	if !ok || code.Tools == nil {
		t.Fatalf("WithCodeTools left execute_code without tools: %#v", all[4])
	}
	return code
}

// needs skips a test when an interpreter is missing.
func needs(t *testing.T, program string) {
	t.Helper()
	if _, err := exec.LookPath(program); err != nil {
		t.Skipf("%s is not installed: %v", program, err)
	}
}

// TestExecuteCode: programs compute and print, call tools through the RPC
// (results parsed, failures raised), and stay within the turn's tool list,
// the command gate, the call limit and the timeout.
func TestExecuteCode(t *testing.T) {
	needs(t, "python3")
	tool := codeTool(t)
	if got := tool.Tools.Names(); strings.Join(got, ",") != "read_file,terminal,write_file" {
		t.Fatalf("callable tools: %v (todo must not be one)", got)
	}
	allowSafe := func(cmd, _ string) error {
		if strings.Contains(cmd, "rm ") {
			return errors.New("refused: recursive delete needs a person's approval")
		}
		return nil
	}
	cases := []struct {
		name     string
		env      func(Env) Env
		args     string
		want     []string // in the output
		notWant  string
		exit     int
		calls    int
		errHas   string
		timedOut bool
	}{
		{name: "computes", args: `{"code":"print(sum(range(10)) * 6)"}`, want: []string{"270"}},
		{name: "reads through the RPC", args: `{"code":"import talaria_tools as t\nr = t.read_file(\"notes.txt\")\nprint(r[\"total_lines\"], r[\"content\"].split(\"|\")[1])"}`,
			want: []string{"2 alpha"}, calls: 1},
		{name: "keyword arguments", args: `{"code":"import talaria_tools as t\nprint(t.read_file(\"notes.txt\", offset=2)[\"content\"])"}`,
			want: []string{"2|beta"}, notWant: "alpha", calls: 1},
		{name: "writes through the RPC", args: `{"code":"import talaria_tools as t\nt.write_file(\"out.txt\", \"from code\")\nprint(open(\"out.txt\").read())"}`,
			want: []string{"from code"}, calls: 1},
		{name: "a tool error raises", args: `{"code":"import talaria_tools as t\ntry:\n    t.read_file(\"missing.txt\")\nexcept t.ToolError as e:\n    print(\"ToolError:\", e)"}`,
			want: []string{"ToolError:", "missing.txt"}, calls: 1},
		{name: "a safe terminal command runs", env: func(e Env) Env { e.CommandGate = allowSafe; return e },
			args: `{"code":"import talaria_tools as t\nprint(t.terminal(\"echo hi from shell\")[\"output\"])"}`, want: []string{"hi from shell"}, calls: 1},
		{name: "a dangerous terminal command is refused", env: func(e Env) Env { e.CommandGate = allowSafe; return e },
			args: `{"code":"import talaria_tools as t\ntry:\n    t.terminal(\"rm -rf build\")\nexcept t.ToolError as e:\n    print(e)"}`, want: []string{"needs a person's approval"}},
		{name: "no gate: no terminal", args: `{"code":"import talaria_tools as t\ntry:\n    t.terminal(\"echo hi\")\nexcept t.ToolError as e:\n    print(e)"}`,
			want: []string{"call the terminal tool"}},
		{name: "outside the turn's tools", env: func(e Env) Env { e.Allowed = func(n string) bool { return n != "read_file" }; return e },
			args: `{"code":"import talaria_tools as t\ntry:\n    t.call(\"read_file\", path=\"notes.txt\")\nexcept t.ToolError as e:\n    print(e)"}`,
			want: []string{"read_file cannot be called", "terminal, write_file"}},
		{name: "not a callable tool", args: `{"code":"import talaria_tools as t\ntry:\n    t.call(\"todo\", todos=[])\nexcept t.ToolError as e:\n    print(e)"}`,
			want: []string{"todo cannot be called"}},
		{name: "call limit", args: fmt.Sprintf(`{"code":"import talaria_tools as t\nn = 0\ntry:\n    for i in range(%d):\n        t.read_file(\"notes.txt\")\n        n += 1\nexcept t.ToolError as e:\n    print(n, e)"}`, CodeMaxToolCalls+5),
			want: []string{fmt.Sprintf("%d this program already made %d tool calls", CodeMaxToolCalls, CodeMaxToolCalls)}, calls: CodeMaxToolCalls},
		{name: "exit code", args: `{"code":"import sys\nprint('bye')\nsys.exit(3)"}`, want: []string{"bye"}, exit: 3},
		{name: "exception", args: `{"code":"raise ValueError('boom')"}`, want: []string{"ValueError: boom"}, exit: 1},
		{name: "clean environment", args: `{"code":"import os\nprint('key:', os.environ.get('OPENAI_API_KEY'))"}`, want: []string{"key: None"}},
		{name: "bash", args: `{"language":"bash","code":"x=21; echo $((x*2))"}`, want: []string{"42"}},
		{name: "timeout", args: `{"code":"import time\nprint('start', flush=True)\ntime.sleep(60)","timeout":5}`, want: []string{"start"}, exit: -1, timedOut: true},
		{name: "empty code", args: `{"code":"  "}`, errHas: `"code" must not be empty`},
		{name: "unknown language", args: `{"code":"x","language":"cobol"}`, errHas: `"language" must be python, node or bash`},
		{name: "workdir outside", args: `{"code":"print(1)","workdir":"/"}`, errHas: "working directory"},
	}
	t.Setenv("OPENAI_API_KEY", "sk-test-secret-value")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTestFile(t, dir, "notes.txt", "alpha\nbeta\n")
			env := Env{Workdir: dir, SessionID: "s", TurnID: "t", CallID: "c1", Policy: Policy{Secrets: []string{"sk-test-secret-value"}}}
			if tc.env != nil {
				env = tc.env(env)
			}
			out, err := runTool(t, tool, env, tc.args)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("error %v, want %q (output %s)", err, tc.errHas, out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res := decode[codeResult](t, out)
			for _, w := range tc.want {
				if !strings.Contains(res.Output, w) {
					t.Errorf("output %q lacks %q", res.Output, w)
				}
			}
			if tc.notWant != "" && strings.Contains(res.Output, tc.notWant) {
				t.Errorf("output %q has %q", res.Output, tc.notWant)
			}
			if tc.exit >= 0 && res.ExitCode != tc.exit {
				t.Errorf("exit code %d, want %d (%q)", res.ExitCode, tc.exit, res.Output)
			}
			if res.ToolCalls != tc.calls {
				t.Errorf("tool calls %d, want %d", res.ToolCalls, tc.calls)
			}
			if (res.Error != "") != tc.timedOut {
				t.Errorf("error %q, timed out expected: %v", res.Error, tc.timedOut)
			}
		})
	}
}

// TestExecuteCodeNode: a Node.js program calls a tool with an object or
// with the required arguments in order, and reads a failure as a rejection.
func TestExecuteCodeNode(t *testing.T) {
	needs(t, "node")
	dir := t.TempDir()
	writeTestFile(t, dir, "notes.txt", "alpha\nbeta\n")
	code := `const t = require("talaria_tools");
(async () => {
  const a = await t.read_file({path: "notes.txt", limit: 1});
  const b = await t.read_file("notes.txt");
  try { await t.read_file("missing.txt"); } catch (e) { console.log("rejected:", e instanceof t.ToolError, e.message.includes("missing.txt")); }
  console.log(a.lines_returned, b.lines_returned);
})();`
	out, err := runTool(t, codeTool(t), Env{Workdir: dir, CallID: "c"}, mustJSON(t, map[string]string{"language": "node", "code": code}))
	if err != nil {
		t.Fatal(err)
	}
	res := decode[codeResult](t, out)
	if res.ExitCode != 0 || !strings.Contains(res.Output, "rejected: true true") || !strings.Contains(res.Output, "1 2") || res.ToolCalls != 3 {
		t.Errorf("node program: %+v", res)
	}
}

// TestCodeCall: the approval text of a program is the command that would
// run it.
func TestCodeCall(t *testing.T) {
	cases := []struct{ args, command, workdir string }{
		{`{"code":"print(1)"}`, `python3 -c 'print(1)'`, ""},
		{`{"code":"console.log('x')","language":"js","workdir":"sub"}`, `node -e 'console.log('\''x'\'')'`, "sub"},
		{`{"code":"rm -rf build","language":"bash"}`, `rm -rf build`, ""},
	}
	for _, c := range cases {
		cmd, wd, ok := CodeCall(c.args)
		if !ok || cmd != c.command || wd != c.workdir {
			t.Errorf("CodeCall(%s) = %q, %q, %v; want %q, %q", c.args, cmd, wd, ok, c.command, c.workdir)
		}
	}
	if _, _, ok := CodeCall(`{"code":""}`); ok {
		t.Error("an empty program was read as a call")
	}
}

// TestExecuteCodeTimeoutStopsItsToolCalls: a program killed by its
// timeout takes the tool call it waits on with it.
func TestExecuteCodeTimeoutStopsItsToolCalls(t *testing.T) {
	needs(t, "python3")
	dir := t.TempDir()
	env := Env{Workdir: dir, CallID: "c", CommandGate: func(string, string) error { return nil }}
	code := `import talaria_tools as t
print("calling", flush=True)
t.terminal("sleep 120; echo late > late.txt")`
	// The terminal call sleeps for two minutes: a program its timeout did
	// not stop would not return within runWithin's minute.
	out, err := runWithin(t, time.Minute, codeTool(t), env, mustJSON(t, map[string]any{"code": code, "timeout": 2}))
	if err != nil {
		t.Fatal(err)
	}
	if res := decode[codeResult](t, out); res.Error == "" || !strings.Contains(res.Output, "calling") {
		t.Fatalf("result %+v, want the timeout", res)
	}
	var pids []byte
	for giveUp := time.Now().Add(time.Minute); time.Now().Before(giveUp); time.Sleep(20 * time.Millisecond) {
		if pids, _ = exec.Command("pgrep", "-f", "sleep 120; echo late").Output(); len(pids) == 0 {
			break
		}
	}
	if len(pids) > 0 {
		t.Errorf("the program's terminal call still runs a minute after its timeout: %s", pids)
	}
}
