package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/talaria-agent/talaria/internal/sandbox"
)

// terminal limits, in seconds.
const (
	TerminalDefaultTimeout = 180
	TerminalMaxTimeout     = 3600
)

// terminateGrace is how long a process group gets between SIGTERM and
// SIGKILL; drainWait is how long output is still read after the group is
// gone (only a process that left the group can hold the pipe that long).
const (
	terminateGrace = 2 * time.Second
	drainWait      = time.Second
)

// Terminal is the terminal tool; a command can have any side effect.
var Terminal = Define(Spec[terminalArgs]{
	Name: "terminal",
	Description: `Run a shell command with bash -c (sh when bash is missing) and return its combined stdout and stderr. ` +
		`The command runs non-interactively: stdin is empty, so commands that prompt for input fail instead of waiting. ` +
		`workdir is the directory to run in, absolute or relative to the working directory (default: the working directory); it must lie under the working directory or a configured write root, and a cd inside the command does not carry over to the next call. ` +
		`timeout is in seconds (default 180, at most 3600); when it expires the command and every process it started are killed. ` +
		`Every process the command started is killed when it finishes, including ones started in the background or detached with setsid, nohup or a double fork: ` +
		`long-running background work (servers, watchers) is not supported here and belongs to a separate process tool. ` +
		`Long output keeps its beginning and end, with the middle replaced by a "[... N characters omitted ...]" marker. ` +
		`The result is JSON: {"output","exit_code"} plus "error" when the command timed out; a non-zero exit_code is reported, not treated as a failure. ` +
		`The command sees a minimal environment (PATH, HOME, LANG, TERM, USER, SHELL, TMPDIR, TZ and configured extras); Talaria's own keys and secrets are never in it. ` +
		`It runs in a sandbox: by default it may write only the working directory, the write roots and /tmp, has no network, and does not see Talaria's home or the user's credentials. ` +
		`When a command fails because of the sandbox (a read-only file system, no network, a path that is not there), call it again with outside_sandbox: true and a reason: a person is asked to let that one command run outside. ` +
		`Prefer read_file and write_file for reading and writing files.`,
	Meta: Meta{
		Toolset:      "shell",
		Guidance:     "terminal commands run in the working directory given below; prefer non-interactive commands, and check your changes by running the build or the tests.",
		GuidanceRank: 60,
		Approval:     "dangerous commands ask (approvals.mode); blocked ones never run",
		FromCode:     true,
	},
	BoundsOwnOutput: true, // the output is cut to the cap (counted once escaped) and kept whole by the tool
	Run:             runTerminal,
})

type terminalResult struct {
	Output   string `json:"output"`
	ExitCode int    `json:"exit_code"`
	Error    string `json:"error,omitempty"`
	// FullOutput is the file keeping the whole output when Output is only
	// its head and tail (Env.OutputDir).
	FullOutput string `json:"full_output,omitempty"`
	// Sandbox says, when a failure looks like the sandbox's doing, what
	// the sandbox allows and how to ask to run outside it.
	Sandbox string `json:"sandbox,omitempty"`
	// GitNotKept names the git data (an index, HEAD) the command wrote in
	// a repository's git directory that could not be brought back there.
	GitNotKept []string `json:"git_not_kept,omitempty"`
}

// runTerminal runs one command.
func runTerminal(ctx context.Context, env Env, call terminalArgs) (string, error) {
	if err := call.normalize(); err != nil {
		return "", err
	}
	dir, err := env.terminalDir(call.Workdir)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("terminal: %w: %w", ErrCancelled, err)
	}
	var box *sandbox.Command
	done := func() []string { return nil }
	if call.OutsideSandbox {
		if env.Escalated == nil || !env.Escalated(env.CallID) {
			return "", fmt.Errorf("terminal: refused: a command runs outside the sandbox only when a person approves it, which this call cannot ask for")
		}
		// A person let this one command step outside.
	} else {
		box, done = env.commandSandbox(dir)
	}
	res, err := runCommand(ctx, call.Command, dir, env.processEnv(), time.Duration(call.Timeout)*time.Second, env.maxOutput(), env.spillTarget(), box)
	res.GitNotKept = done()
	if err != nil {
		return "", fmt.Errorf("terminal: %w", err)
	}
	if box != nil {
		res.Sandbox = sandboxHint(res, box.Settings)
	}
	return marshalResult(res)
}

// ErrTimedOut: a script run by RunScript did not finish in time.
var ErrTimedOut = errors.New("timed out")

// RunScript runs script with bash -c (sh when bash is missing) in dir, an
// existing directory, confined like a terminal command: its own process
// group (and cgroup where possible), the tools' environment allowlist of p,
// every process it started killed when it ends or after timeout. The output
// (stdout and stderr) keeps its beginning and end within maxChars
// (DefaultMaxOutputChars when <= 0). A non-zero exit is reported in
// exitCode, not as an error; a timeout returns the output so far with an
// error matching ErrTimedOut, a cancelled ctx one matching ErrCancelled.
func RunScript(ctx context.Context, script, dir string, timeout time.Duration, maxChars int, p Policy) (output string, exitCode int, err error) {
	if maxChars <= 0 {
		maxChars = DefaultMaxOutputChars
	}
	if timeout <= 0 {
		timeout = TerminalDefaultTimeout * time.Second
	}
	if info, err := os.Stat(dir); err != nil {
		return "", -1, fmt.Errorf("script directory: %w", err)
	} else if !info.IsDir() {
		return "", -1, fmt.Errorf("script directory %s is not a directory", dir)
	}
	if err := ctx.Err(); err != nil {
		return "", -1, fmt.Errorf("%w: %w", ErrCancelled, err)
	}
	res, err := runCommand(ctx, script, dir, ToolEnviron(os.Environ(), p), timeout, maxChars, spillTarget{}, nil)
	if err != nil {
		return "", -1, err
	}
	if res.Error != "" {
		return res.Output, res.ExitCode, fmt.Errorf("%w: %s", ErrTimedOut, res.Error)
	}
	return res.Output, res.ExitCode, nil
}

// shellPath prefers bash and falls back to sh.
func shellPath() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
}

// runCommand runs command in its own process group and makes sure no
// process it started outlives the call, in its group or not. An output
// longer than maxChars (counted once escaped in JSON) is returned as its
// head and tail; when spill has a directory, the whole output is kept in a
// file there, which the result names. box, when set, is the sandbox it runs
// in; nil runs it unconfined (what the owner configured).
func runCommand(ctx context.Context, command, dir string, environ []string, timeout time.Duration, maxChars int, spill spillTarget, box *sandbox.Command) (terminalResult, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return terminalResult{}, fmt.Errorf("create output pipe: %w", err)
	}
	defer pr.Close()

	jail := newConfinement()
	cmd, wait, err := startShell(command, dir, environ, pw, jail, box)
	pw.Close() // the children hold the only write ends now
	if err != nil {
		return terminalResult{}, err
	}
	pgid := cmd.Process.Pid
	jail.started(pgid)
	defer jail.release()

	out := newHeadTailBuffer(maxChars)
	kept := newSpillWriter(spill, maxChars)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(io.MultiWriter(out, kept), pr)
	}()
	waited := make(chan error, 1)
	go func() { waited <- wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	var timedOut, cancelled bool
	select {
	case waitErr = <-waited:
	case <-timer.C:
		timedOut = true
		terminateGroup(pgid)
		waitErr = <-waited
	case <-ctx.Done():
		cancelled = true
		terminateGroup(pgid)
		waitErr = <-waited
	}
	// Background processes the command left behind: its group gets a
	// chance to exit, then everything it started is killed.
	if groupAlive(pgid) {
		terminateGroup(pgid)
	}
	jail.release()
	select {
	case <-copied:
	case <-time.After(drainWait):
		// A process that left the group still holds the pipe; stop reading.
		_ = pr.SetReadDeadline(time.Now())
		<-copied
	}

	out.note = kept.close(out.cut())
	output := out.String()
	if cancelled {
		return terminalResult{}, fmt.Errorf("%w: %w; output so far: %q", ErrCancelled, context.Cause(ctx), capMiddle(output, 2000))
	}
	code, err := exitCode(cmd, waitErr)
	if err != nil {
		return terminalResult{}, err
	}
	res := terminalResult{Output: output, ExitCode: code, FullOutput: kept.path()}
	if timedOut {
		res.Error = fmt.Sprintf("timed out after %ds", int(timeout/time.Second))
	}
	return res, nil
}

// sealInherited makes the descriptors the process was started with
// close-on-exec, once, before its first command.
var sealInherited sync.Once

// startShell starts the shell running command, confined, in the sandbox
// box when it is set; when the start fails inside a cgroup it is tried
// once more without one. wait waits for the shell (instead of cmd.Wait).
func startShell(command, dir string, environ []string, out *os.File, jail *confinement, box *sandbox.Command) (cmd *exec.Cmd, wait func() error, err error) {
	sealInherited.Do(sandbox.SealInherited) // nothing the process's launcher left open reaches a command
	build := func() (*exec.Cmd, error) {
		cmd := exec.Command(shellPath(), "-c", command)
		cmd.Dir = dir
		cmd.Stdin = nil // the null device
		cmd.Stdout = out
		cmd.Stderr = out
		cmd.Env = slices.Clone(environ)
		cmd.SysProcAttr = processGroupAttr()
		jail.prepare(cmd)
		if box != nil {
			if err := sandbox.Wrap(cmd, *box); err != nil {
				return nil, err
			}
		}
		return cmd, nil
	}
	settings := sandbox.Settings{Mode: sandbox.ModeOff}
	if box != nil {
		settings = box.Settings
	}
	if cmd, err = build(); err != nil {
		return nil, nil, fmt.Errorf("refused: %w", err)
	}
	wait, err = sandbox.Start(cmd, settings)
	if err != nil && jail.inCgroup() {
		slog.Debug("terminal: starting in a cgroup failed; using the process scan", "err", err)
		jail.withoutCgroup()
		if cmd, err = build(); err != nil {
			return nil, nil, err
		}
		wait, err = sandbox.Start(cmd, settings)
	}
	if errors.Is(err, sandbox.ErrUnavailable) {
		return nil, nil, fmt.Errorf("refused: %w", err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	return cmd, wait, nil
}

// exitCode turns Wait's outcome into a shell-style exit code: the exit
// status, or 128+signal when the shell was killed by a signal.
func exitCode(cmd *exec.Cmd, waitErr error) (int, error) {
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return 0, fmt.Errorf("wait for command: %w", waitErr)
	}
	if cmd.ProcessState == nil {
		return 0, errors.New("wait for command: no process state")
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return cmd.ProcessState.ExitCode(), nil
}

// terminateGroup sends SIGTERM to the process group, waits up to
// terminateGrace for it to disappear, then sends SIGKILL.
func terminateGroup(pgid int) {
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil {
		if !errors.Is(err, syscall.ESRCH) {
			slog.Warn("terminal: SIGTERM to process group failed", "pgid", pgid, "err", err)
		}
		return
	}
	deadline := time.Now().Add(terminateGrace)
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if !groupAlive(pgid) {
			return
		}
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		slog.Warn("terminal: SIGKILL to process group failed", "pgid", pgid, "err", err)
	}
}

// groupAlive reports whether any live (non-zombie) process is still in the
// process group. Zombies do not count: they run nothing, and an orphan's
// zombie is reaped by init, not by us.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil {
		return false
	}
	return groupHasLiveMember(pgid)
}

// terminal is a built-in tool.
var _ = builtin(func(Services) Tool { return Terminal })
