//go:build linux

package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sleepersWith lists live processes whose command line is "sleep <arg>".
func sleepersWith(arg string) []int {
	want := []byte("sleep\x00" + arg + "\x00")
	var out []int
	for _, p := range readProcs() {
		if !p.alive() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/cmdline")
		if err == nil && bytes.HasSuffix(cmdline, want) && bytes.Contains(cmdline, []byte("sleep")) {
			out = append(out, p.pid)
		}
	}
	return out
}

// waitNoSleepers waits for sleepers to be gone (a minute at most: each
// sleeps far longer), killing any left so a failing test leaks nothing.
func waitNoSleepers(t *testing.T, arg string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		left := sleepersWith(arg)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes %v (sleep %s) outlived their command", left, arg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTerminalKillsDetachedProcesses(t *testing.T) {
	commands := []struct {
		name    string
		command string // %s is the sleep's unique argument
	}{
		{"setsid", `setsid sleep %s & echo started`},
		{"nohup sh -c", `nohup sh -c 'sleep %s' >/dev/null 2>&1 & echo started`},
		{"double fork", `( ( sleep %s & ) & ); echo started`},
		{"setsid twice", `setsid sh -c 'setsid sleep %s >/dev/null 2>&1 &'; echo started`},
		{"nohup setsid in a subshell", `(nohup setsid sleep %s >/dev/null 2>&1 &); echo started`},
		{"environment cleared", `setsid env -i sleep %s >/dev/null 2>&1 & sleep 0.5; echo started`},
	}
	modes := []struct {
		name     string
		noCgroup bool
	}{{"cgroup", false}, {"process scan", true}}
	for mi, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			before := cgroupUnusable.Load()
			defer cgroupUnusable.Store(before)
			cgroupUnusable.Store(mode.noCgroup)
			if !mode.noCgroup {
				probe := newCgroup("probe-" + randomHex(4))
				if probe == nil {
					t.Skip("cgroup v2 is not writable here")
				}
				probe.remove()
			}
			for ci, tc := range commands {
				t.Run(tc.name, func(t *testing.T) {
					arg := fmt.Sprintf("%d.%d%d%d", 1000+os.Getpid()%1000, mi, ci, time.Now().UnixNano()%1000)
					// The sleeper sleeps for over 1,000 s: a call that
					// waited for it would not return within runWithin's
					// minute.
					out, err := runWithin(t, time.Minute, Terminal, Env{Workdir: t.TempDir()}, mustJSON(t, map[string]string{"command": fmt.Sprintf(tc.command, arg)}))
					if err != nil {
						t.Fatal(err)
					}
					if r := decode[terminalResult](t, out); !strings.Contains(r.Output, "started") || r.ExitCode != 0 {
						t.Errorf("result %+v", r)
					}
					waitNoSleepers(t, arg)
				})
			}
		})
	}
}

func TestTerminalTimeoutKillsDetachedProcesses(t *testing.T) {
	arg := fmt.Sprintf("%d.77", 1000+os.Getpid()%1000)
	out, err := runTool(t, Terminal, Env{Workdir: t.TempDir()}, mustJSON(t, map[string]any{"command": "setsid sleep " + arg + " & sleep 30", "timeout": 1}))
	if err != nil {
		t.Fatal(err)
	}
	if r := decode[terminalResult](t, out); r.Error == "" {
		t.Errorf("result %+v, want a timeout", r)
	}
	waitNoSleepers(t, arg)
}

func TestTerminalMarksItsProcesses(t *testing.T) {
	out, err := runTool(t, Terminal, Env{Workdir: t.TempDir()}, `{"command": "echo $TALARIA_CMD_ID"}`)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(decode[terminalResult](t, out).Output)
	if len(id) != 24 {
		t.Fatalf("marker %q", id)
	}
	out2, _ := runTool(t, Terminal, Env{Workdir: t.TempDir()}, `{"command": "echo $TALARIA_CMD_ID"}`)
	if strings.TrimSpace(decode[terminalResult](t, out2).Output) == id {
		t.Error("two commands share a marker")
	}
}

func TestParseProcInfo(t *testing.T) {
	tests := []struct {
		name string
		stat string
		want procInfo
		ok   bool
	}{
		{"plain", "42 (sleep) S 7 42 42 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 98765 0 0",
			procInfo{procKey: procKey{pid: 42, start: 98765}, ppid: 7, pgrp: 42, state: 'S'}, true},
		{"comm with spaces and parens", "43 (a (b) c) Z 1 40 40 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0",
			procInfo{procKey: procKey{pid: 43, start: 5}, ppid: 1, pgrp: 40, state: 'Z'}, true},
		{"short", "44 (x) S 1 2", procInfo{}, false},
		{"no comm", "garbage", procInfo{}, false},
	}
	for _, tt := range tests {
		got, ok := parseProcInfo(firstField(tt.stat), []byte(tt.stat))
		if ok != tt.ok || got != tt.want {
			t.Errorf("%s: parseProcInfo = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func firstField(s string) int {
	n, _ := strconv.Atoi(strings.Fields(s)[0])
	return n
}

func TestCgroupPaths(t *testing.T) {
	mounts := []struct {
		line string
		want string
		ok   bool
	}{
		{"35 25 0:30 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate", "/sys/fs/cgroup", true},
		{"40 25 0:31 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw", "/sys/fs/cgroup/unified", true},
		{"41 25 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory", "", false},
		{"42 25 0:30 /sub /mnt/cg rw - cgroup2 cgroup2 rw", "", false},
		{"nonsense", "", false},
	}
	for _, tt := range mounts {
		got, ok := cgroup2MountPoint(tt.line)
		if got != tt.want || ok != tt.ok {
			t.Errorf("cgroup2MountPoint(%q) = %q, %v", tt.line, got, ok)
		}
	}
	paths := []struct {
		data string
		want string
		ok   bool
	}{
		{"0::/user.slice/worker.service\n", "/user.slice/worker.service", true},
		{"4:memory:/x\n1:name=systemd:/\n0::/\n", "/", true},
		{"4:memory:/x\n", "", false},
	}
	for _, tt := range paths {
		got, ok := unifiedCgroupPath([]byte(tt.data))
		if got != tt.want || ok != tt.ok {
			t.Errorf("unifiedCgroupPath(%q) = %q, %v", tt.data, got, ok)
		}
	}
}

func TestTerminalHidesTheWorkerEnvironment(t *testing.T) {
	if _, err := runTool(t, Terminal, Env{Workdir: t.TempDir()}, `{"command": "true"}`); err != nil {
		t.Fatal(err)
	}
	dumpable, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_GET_DUMPABLE, 0, 0)
	if errno != 0 || dumpable != 0 {
		t.Fatalf("the worker is still dumpable (%d, %v): commands of its user can read its environment", dumpable, errno)
	}
}

func TestSweepStaleCgroups(t *testing.T) {
	parent, err := ownCgroupDir()
	if err != nil || cgroupUnusable.Load() {
		t.Skip("cgroup v2 is not usable here")
	}
	// A dead worker's cgroup, still holding a process.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(parent, cgroupPrefix+strconv.Itoa(dead.Process.Pid)+"-stale")
	live := filepath.Join(parent, cgroupPrefix+strconv.Itoa(os.Getppid())+"-live")
	for _, d := range []string{stale, live} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Skipf("cannot create a cgroup: %v", err)
		}
	}
	defer os.Remove(live)
	defer os.Remove(stale)
	sleeper := exec.Command("sleep", "120")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleeper.Process.Kill()
	if err := os.WriteFile(filepath.Join(stale, "cgroup.procs"), []byte(strconv.Itoa(sleeper.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	sweepStaleCgroups(parent)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale cgroup is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live worker's cgroup was removed: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- sleeper.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Error("the process in the stale cgroup was not killed within a minute")
	}
}

func TestCgroupOwner(t *testing.T) {
	tests := []struct {
		name string
		pid  int
		ok   bool
	}{
		{"talaria-cmd-123-abc", 123, true},
		{"talaria-cmd-abc", 0, false},
		{"talaria-cmd-0-x", 0, false},
		{"other-123-x", 0, false},
	}
	for _, tt := range tests {
		if pid, ok := cgroupOwner(tt.name); pid != tt.pid || ok != tt.ok {
			t.Errorf("cgroupOwner(%q) = %d, %v", tt.name, pid, ok)
		}
	}
}

// TestRunScriptConfined: a script run by RunScript leaves no process
// behind, detached or not, when it ends or times out.
func TestRunScriptConfined(t *testing.T) {
	tests := []struct {
		name, script string // %s is the sleep's unique argument
		timeout      time.Duration
		wantErr      error
	}{
		{"setsid", `setsid sleep %s >/dev/null 2>&1 & echo started`, 10 * time.Second, nil},
		{"nohup", `nohup sleep %s >/dev/null 2>&1 & echo started`, 10 * time.Second, nil},
		{"timeout", `echo started; sleep %s`, 300 * time.Millisecond, ErrTimedOut},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			arg := fmt.Sprintf("%d.%d%d", 2000+os.Getpid()%1000, i, time.Now().UnixNano()%1000)
			out, _, err := RunScript(context.Background(), fmt.Sprintf(tc.script, arg), t.TempDir(), tc.timeout, 0, Policy{})
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if !strings.Contains(out, "started") {
				t.Errorf("output %q", out)
			}
			waitNoSleepers(t, arg)
		})
	}
}

// TestHideWorkerEnvironment: callable at start, any number of times.
func TestHideWorkerEnvironment(t *testing.T) {
	HideWorkerEnvironment()
	HideWorkerEnvironment()
	dumpable, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_GET_DUMPABLE, 0, 0)
	if errno != 0 || dumpable != 0 {
		t.Fatalf("the worker is still dumpable (%d, %v)", dumpable, errno)
	}
}
