package tools

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestProcessTool: start returns at once, wait sees the exit and its
// output, kill stops a long one and what it started, a repeated call
// gets the process it started, and a session sees only its own.
func TestProcessTool(t *testing.T) {
	procs := NewProcesses()
	defer procs.Close()
	tool := Process(procs)
	dir := t.TempDir()
	env := Env{Workdir: dir, SessionID: "s1", TurnID: "t", ModelCall: 1, CallID: "c1", OutputDir: t.TempDir()}
	run := func(env Env, args string) processView {
		t.Helper()
		out, err := runTool(t, tool, env, args)
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		return decode[processView](t, out)
	}
	// The process ends once the test creates "go": start returns while
	// it runs, however slow the machine.
	const held = `{"action":"start","command":"echo hi; while [ ! -e go ]; do sleep 0.05; done; echo bye; exit 3"}`
	short := run(env, held)
	if short.Status != "running" {
		t.Fatalf("start: %+v", short)
	}
	if again := run(env, held); again.ID != short.ID {
		t.Errorf("the same call started a second process: %s, %s", short.ID, again.ID)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	done := run(env, `{"action":"wait","id":"`+short.ID+`","timeout":60}`)
	if done.Status != "exited" || done.ExitCode == nil || *done.ExitCode != 3 || done.Output != "hi\nbye\n" {
		t.Errorf("wait: %+v", done)
	}
	if again := run(env, `{"action":"poll","id":"`+short.ID+`"}`); again.Output != "" {
		t.Errorf("a second poll repeats output: %q", again.Output)
	}
	if log := run(env, `{"action":"log","id":"`+short.ID+`","lines":1}`); log.Output != "bye" {
		t.Errorf("log: %q", log.Output)
	}

	env.CallID = "c2"
	long := run(env, `{"action":"start","command":"sleep 60 & while true; do echo tick; sleep 0.1; done"}`)
	var ticked processView // polled until its first tick shows
	for giveUp := time.Now().Add(time.Minute); time.Now().Before(giveUp); time.Sleep(20 * time.Millisecond) {
		p := run(env, `{"action":"poll","id":"`+long.ID+`"}`)
		ticked.Status, ticked.Output = p.Status, ticked.Output+p.Output
		if p.Status != "running" || strings.Contains(ticked.Output, "tick") {
			break
		}
	}
	if ticked.Status != "running" || !strings.Contains(ticked.Output, "tick") {
		t.Errorf("poll of a running process: %+v", ticked)
	}
	if k := run(env, `{"action":"kill","id":"`+long.ID+`"}`); k.Status != "exited" {
		t.Errorf("kill: %+v", k)
	}
	out, err := runTool(t, tool, env, `{"action":"list"}`)
	if l := decode[struct{ Processes []processView }](t, out); err != nil || len(l.Processes) != 2 || l.Processes[0].ID != short.ID {
		t.Errorf("list: %s %v", out, err)
	}
	other := env
	other.SessionID = "s2"
	if _, err := runTool(t, tool, other, `{"action":"poll","id":"`+short.ID+`"}`); err == nil || !strings.Contains(err.Error(), "no process") {
		t.Errorf("another session's process: %v", err)
	}
	for _, tt := range []struct{ args, errHas string }{
		{`{"action":"start","command":"  "}`, "must not be empty"},
		{`{"action":"start","command":"true","workdir":"/etc"}`, "outside the working directory"},
		{`{"action":"poll"}`, `missing required argument "id"`},
		{`{"action":"restart","id":"p1"}`, `"action" must be`},
	} {
		if _, err := runTool(t, tool, env, tt.args); err == nil || !strings.Contains(err.Error(), tt.errHas) {
			t.Errorf("%s: %v, want %q", tt.args, err, tt.errHas)
		}
	}
}

func TestProcessCall(t *testing.T) {
	for _, tt := range []struct {
		args, cmd, dir string
		ok             bool
	}{
		{`{"action":"start","command":"rm -rf build","workdir":"sub"}`, "rm -rf build", "sub", true},
		{`{"action":"poll","id":"p1"}`, "", "", false},
		{`{"action":"start"}`, "", "", false},
		{`not json`, "", "", false},
	} {
		cmd, dir, ok := ProcessCall(tt.args)
		if cmd != tt.cmd || dir != tt.dir || ok != tt.ok {
			t.Errorf("ProcessCall(%s) = %q %q %v", tt.args, cmd, dir, ok)
		}
	}
}

// TestProcessReap: the processes of a conversation that is over are
// killed; another's go on; nothing running asks nothing.
func TestProcessReap(t *testing.T) {
	procs := NewProcesses()
	defer procs.Close()
	tool := Process(procs)
	asked := 0
	retired := func(_ context.Context, keys []string) ([]string, error) {
		asked++
		return slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return k != "old" }), nil
	}
	if n, err := procs.Reap(context.Background(), retired); n != 0 || err != nil || asked != 0 {
		t.Fatalf("reap with nothing running: %d %v, asked %d times", n, err, asked)
	}
	started := map[string]processView{}
	for _, session := range []string{"old", "current"} {
		env := Env{Workdir: t.TempDir(), SessionID: session + "-child", OutputsKey: session, CallID: "c", OutputDir: t.TempDir()}
		out, err := runTool(t, tool, env, `{"action":"start","command":"sleep 60"}`)
		if err != nil {
			t.Fatal(err)
		}
		started[session] = decode[processView](t, out)
	}
	if n, err := procs.Reap(context.Background(), retired); n != 1 || err != nil {
		t.Fatalf("reap: %d %v", n, err)
	}
	if v := procs.list("old"); len(v) != 1 || v[0].Status != "exited" {
		t.Errorf("the old conversation's process: %+v", v)
	}
	if v := procs.list("current"); len(v) != 1 || v[0].Status != "running" {
		t.Errorf("the current conversation's process: %+v", v)
	}
}
