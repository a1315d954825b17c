package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestTerminal(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, dir, "file.txt", "x")
	other := t.TempDir()

	seqOut := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "%d\n", i)
		}
		return b.String()
	}(10000)

	tests := []struct {
		name     string
		env      Env
		args     string
		output   string // exact output, unless check is set
		exitCode int
		check    func(t *testing.T, r terminalResult)
		wantErr  error
		errHas   string
	}{
		{name: "echo", env: Env{Workdir: dir}, args: `{"command":"echo hello"}`, output: "hello\n"},
		{name: "non-zero exit is not an error", env: Env{Workdir: dir}, args: `{"command":"echo failing; exit 3"}`, output: "failing\n", exitCode: 3},
		{name: "stdout and stderr combined in order", env: Env{Workdir: dir}, args: `{"command":"echo out; echo err >&2; echo out2"}`, output: "out\nerr\nout2\n"},
		{name: "default workdir is Env.Workdir", env: Env{Workdir: dir}, args: `{"command":"pwd"}`, output: dir + "\n"},
		{name: "relative workdir", env: Env{Workdir: dir}, args: `{"command":"pwd","workdir":"sub"}`, output: filepath.Join(dir, "sub") + "\n"},
		{name: "absolute workdir under a write root", env: Env{Workdir: dir, Policy: Policy{WriteRoots: []string{other}}}, args: mustJSON(t, map[string]string{"command": "pwd", "workdir": other}), output: other + "\n"},
		{name: "empty workdir means default", env: Env{Workdir: dir}, args: `{"command":"pwd","workdir":""}`, output: dir + "\n"},
		{name: "stdin is empty", env: Env{Workdir: dir}, args: `{"command":"cat; read x; echo rc=$?"}`, output: "rc=1\n"},
		{name: "bash features available", env: Env{Workdir: dir}, args: `{"command":"a=(1 2 3); echo ${#a[@]}"}`, output: "3\n"},
		{name: "killed by signal reports 128+n", env: Env{Workdir: dir}, args: `{"command":"kill -9 $$"}`, output: "", exitCode: 137},
		{name: "timeout as numeric string", env: Env{Workdir: dir}, args: `{"command":"echo ok","timeout":"5"}`, output: "ok\n"},
		{name: "output capped keeping head and tail", env: Env{Workdir: dir, MaxOutputChars: 100}, args: `{"command":"seq 1 10000"}`,
			check: func(t *testing.T, r terminalResult) {
				want := seqOut[:50] + omittedMarker(len(seqOut)-100) + seqOut[len(seqOut)-50:]
				if r.Output != want {
					t.Errorf("output:\n%q\nwant:\n%q", r.Output, want)
				}
			}},

		{name: "missing workdir", env: Env{Workdir: dir}, args: `{"command":"pwd","workdir":"nope"}`, wantErr: os.ErrNotExist, errHas: filepath.Join(dir, "nope")},
		{name: "workdir is a file", env: Env{Workdir: dir}, args: `{"command":"pwd","workdir":"file.txt"}`, errHas: "not a directory"},
		{name: "missing command", env: Env{Workdir: dir}, args: `{}`, wantErr: ErrInvalidArguments, errHas: `"command"`},
		{name: "blank command", env: Env{Workdir: dir}, args: `{"command":"   "}`, wantErr: ErrInvalidArguments},
		{name: "command wrong type", env: Env{Workdir: dir}, args: `{"command":["ls"]}`, wantErr: ErrInvalidArguments, errHas: "must be a string"},
		{name: "negative timeout", env: Env{Workdir: dir}, args: `{"command":"ls","timeout":-1}`, wantErr: ErrInvalidArguments, errHas: `"timeout"`},
		{name: "timeout not a number", env: Env{Workdir: dir}, args: `{"command":"ls","timeout":"soon"}`, wantErr: ErrInvalidArguments},
		{name: "workdir wrong type", env: Env{Workdir: dir}, args: `{"command":"ls","workdir":false}`, wantErr: ErrInvalidArguments},
		{name: "malformed JSON", env: Env{Workdir: dir}, args: `{"command": "ls"`, wantErr: ErrInvalidArguments},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runTool(t, Terminal, tc.env, tc.args)
			if expectError(t, out, err, tc.wantErr, tc.errHas) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := decode[terminalResult](t, out)
			if r.Error != "" {
				t.Errorf("unexpected error field %q", r.Error)
			}
			if r.ExitCode != tc.exitCode {
				t.Errorf("exit code %d, want %d", r.ExitCode, tc.exitCode)
			}
			if tc.check != nil {
				tc.check(t, r)
			} else if r.Output != tc.output {
				t.Errorf("output %q, want %q", r.Output, tc.output)
			}
		})
	}
}

// firstInt parses the first line of output as a pid.
func firstInt(t *testing.T, output string) int {
	t.Helper()
	line, _, _ := strings.Cut(output, "\n")
	n, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("output does not start with a pid: %q", output)
	}
	return n
}

// processGone reports whether pid no longer runs (absent or a zombie).
func processGone(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	state, _, ok := parseProcStat(stat)
	return ok && (state == 'Z' || state == 'X')
}

// assertGroupGone checks that the process group and the given pids are gone.
func assertGroupGone(t *testing.T, pgid int, pids ...int) {
	t.Helper()
	if groupHasLiveMember(pgid) {
		t.Errorf("process group %d still has live members", pgid)
	}
	for _, pid := range pids {
		if !processGone(pid) {
			t.Errorf("process %d is still running", pid)
		}
	}
}

// timeoutKillCases are commands that outlive a timeout of 1 s: the shell
// prints its pid (the process group id) and the pid of a background sleep,
// then waits on a foreground sleep of two minutes.
var timeoutKillCases = []struct{ name, command string }{
	{"sleep", `sleep 120 & echo $$; echo $!; sleep 120`},
	// SIGTERM is ignored by the shell and its children: SIGKILL follows
	// after the grace period.
	{"SIGTERM ignored", `trap '' TERM; sleep 120 & echo $$; echo $!; sleep 120`},
}

// TestTerminalTimeoutKillsProcessGroup: the timeout kills the command's
// whole group (a call that did not would wait two minutes for the sleeps,
// past runWithin's minute). How long the kill takes is
// BenchmarkTerminalKills' to show.
func TestTerminalTimeoutKillsProcessGroup(t *testing.T) {
	for _, tc := range timeoutKillCases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runWithin(t, time.Minute, Terminal, Env{Workdir: t.TempDir(), Policy: unsandboxed}, mustJSON(t, map[string]any{"command": tc.command, "timeout": 1}))
			if err != nil {
				t.Fatal(err)
			}
			r := decode[terminalResult](t, out)
			if r.Error != "timed out after 1s" {
				t.Errorf("error field %q", r.Error)
			}
			if r.ExitCode < 128 {
				t.Errorf("exit code %d, want a signal exit code", r.ExitCode)
			}
			pgid := firstInt(t, r.Output)
			_, rest, _ := strings.Cut(r.Output, "\n")
			bg := firstInt(t, rest)
			assertGroupGone(t, pgid, pgid, bg)
		})
	}
}

func TestTerminalContextCancellationKillsProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	go func() {
		// Cancel once the command has started and written its pid.
		for giveUp := time.Now().Add(time.Minute); time.Now().Before(giveUp); {
			if data, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(data), "\n") {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	// The command sleeps for two minutes: a cancellation that did not end
	// it would not return within a minute.
	type outcome struct {
		out string
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		out, err := Terminal.Run(ctx, Env{Workdir: dir, Policy: unsandboxed}, []byte(`{"command":"echo $$ > pid; sleep 120"}`))
		done <- outcome{out, err}
	}()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the cancelled command still ran a minute later")
	}
	if o.err == nil {
		t.Fatalf("expected a cancellation error, got %s", o.out)
	}
	if !errors.Is(o.err, ErrCancelled) || !errors.Is(o.err, context.Canceled) {
		t.Errorf("error %q is not a cancellation", o.err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pgid := firstInt(t, string(data))
	assertGroupGone(t, pgid, pgid)
}

func TestTerminalAlreadyCancelledDoesNotRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	_, err := Terminal.Run(ctx, Env{Workdir: dir}, []byte(`{"command":"touch ran"}`))
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("error %v, want ErrCancelled", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); !errors.Is(err, os.ErrNotExist) {
		t.Error("the command ran despite the cancelled context")
	}
}

// TestTerminalKillsBackgroundLeftovers: a call returns when its shell
// exits, without waiting for a background process (which sleeps two
// minutes: a call that waited would not return within runWithin's
// minute), and kills it.
func TestTerminalKillsBackgroundLeftovers(t *testing.T) {
	out, err := runWithin(t, time.Minute, Terminal, Env{Workdir: t.TempDir(), Policy: unsandboxed}, `{"command":"sleep 120 & echo $!"}`)
	if err != nil {
		t.Fatal(err)
	}
	r := decode[terminalResult](t, out)
	if r.ExitCode != 0 || r.Error != "" {
		t.Errorf("result %+v", r)
	}
	bg := firstInt(t, r.Output)
	assertGroupGone(t, bg, bg)
}

func TestTerminalNotIdempotent(t *testing.T) {
	if (Terminal).Idempotent() {
		t.Error("terminal must report not idempotent")
	}
}

// escapedCommand starts a sleep of two minutes that leaves the process
// group (setsid) but keeps the output pipe open, prints its pid and
// "started".
const escapedCommand = `{"command":"setsid sleep 120 & echo $!; sleep 0.3; echo started"}`

// killEscaped kills the escaped sleep whose pid is the first line of a
// terminal result.
func killEscaped(t testing.TB, out string) {
	r := decode[terminalResult](t, out)
	if pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(r.Output, "\n", 2)[0])); err == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// TestTerminalDoesNotHangOnEscapedProcess: the call returns once the shell
// exits and the output has drained for a while, not when the escaped
// process (which sleeps two minutes, past runWithin's minute) closes the
// pipe.
func TestTerminalDoesNotHangOnEscapedProcess(t *testing.T) {
	out, err := runWithin(t, time.Minute, Terminal, Env{Workdir: t.TempDir(), Policy: unsandboxed}, escapedCommand)
	if err != nil {
		t.Fatal(err)
	}
	defer killEscaped(t, out)
	if r := decode[terminalResult](t, out); !strings.HasSuffix(r.Output, "\nstarted\n") || r.ExitCode != 0 {
		t.Errorf("result %+v", r)
	}
}
