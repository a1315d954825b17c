package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// process limits.
const (
	// maxSessionProcesses bounds the processes running for one session.
	maxSessionProcesses = 8
	processPollBytes    = 8 << 10
	processWaitDefault  = 30
	processWaitMax      = 300
	processLogLines     = 50
)

// processArgs are the process tool's arguments.
type processArgs struct {
	Action  string   `json:"action" jsonschema:"What to do: start, poll, log, wait, kill or list."`
	Command string   `json:"command,omitempty" jsonschema:"start: the shell command."`
	Workdir string   `json:"workdir,omitempty" jsonschema:"start: where it runs (default the working directory)."`
	ID      idString `json:"id,omitempty" jsonschema:"poll, log, wait, kill: the process id start returned."`
	Lines   int      `json:"lines,omitempty" jsonschema:"log: how many last lines (at most 500). Default 50."`
	Timeout int      `json:"timeout,omitempty" jsonschema:"wait: seconds to wait (at most 300). Default 30."`
}

// processSpec is the process tool over ps, which keeps what it started.
func processSpec(ps *Processes) Spec[processArgs] {
	return Spec[processArgs]{
		Name: "process",
		Description: `Run a command in the background and look after it: for servers, watchers and builds that outlive one call. ` +
			`"start" {command, workdir?} starts it (bash -c, confined like terminal, the same approval rules) and returns its id at once; ` +
			`"poll" {id} says whether it runs (or its exit code) and gives the output since the last poll; ` +
			`"log" {id, lines?} gives the last lines of its output (default 50); ` +
			`"wait" {id, timeout?} waits for it to end, up to timeout seconds (default 30, at most 300); ` +
			`"kill" {id} stops it and everything it started; "list" shows this session's processes. ` +
			`Output goes to a file under the session's kept outputs (read_file can read it). A process lives until it ends, is killed, the session is reset, or the worker stops.`,
		Meta: Meta{
			Toolset:  "shell",
			Approval: "a start is assessed as a terminal command",
		},
		Run: func(ctx context.Context, env Env, a processArgs) (string, error) { return ps.run(ctx, env, a) },
	}
}

// Process is the process tool over ps, which keeps what it started. A
// start is not idempotent: a retry after a crash must not start a second
// process (the same call again while this worker lives gets the same one).
func Process(ps *Processes) Tool { return Define(processSpec(ps)) }

// Processes are the background processes a worker started, by session.
// The zero value is not usable: NewProcesses.
type Processes struct {
	mu    sync.Mutex
	procs map[string]*bgProcess
	byKey map[string]string // call key -> process id
	next  int
}

// NewProcesses makes an empty set of background processes.
func NewProcesses() *Processes {
	return &Processes{procs: map[string]*bgProcess{}, byKey: map[string]string{}}
}

// bgProcess is one background command.
type bgProcess struct {
	id, session, command, dir, log string
	started                        time.Time
	pgid                           int
	jail                           *confinement
	done                           chan struct{}
	mu                             sync.Mutex
	exitCode                       int
	ended                          time.Time
	polled                         int64 // bytes of the log already returned by poll
}

type processView struct {
	ID       string `json:"id"`
	Command  string `json:"command"`
	Status   string `json:"status"` // running or exited
	ExitCode *int   `json:"exit_code,omitempty"`
	Started  string `json:"started"`
	Log      string `json:"log"`
	Output   string `json:"output,omitempty"`
	// More: poll's output stopped at its cap; poll again for the rest.
	More bool `json:"more,omitempty"`
}

// ProcessCall reads a process call's command and workdir when it is a
// start, for the approval assessment; ok is false otherwise.
func ProcessCall(args string) (command, workdir string, ok bool) {
	a, err := decodeArgs[processArgs]("process", json.RawMessage(args), processSchema.schema, processSchema.resolved)
	if err != nil || a.Action != "start" || strings.TrimSpace(a.Command) == "" {
		return "", "", false
	}
	return a.Command, strings.TrimSpace(a.Workdir), true
}

// processSchema is the process tool's decoding, for ProcessCall.
var processSchema = Define(processSpec(nil)).(*typed[processArgs])

// run runs one process call.
func (ps *Processes) run(ctx context.Context, env Env, a processArgs) (string, error) {
	if ps == nil {
		return "", errors.New("process: this worker keeps no background processes")
	}
	action := a.Action
	if action == "start" {
		v, err := ps.start(env, a)
		if err != nil {
			return "", err
		}
		return marshalResult(v)
	}
	if action == "list" {
		return marshalResult(map[string]any{"processes": ps.list(env.outputsKey())})
	}
	if a.ID == "" {
		return "", invalidArgs("process", `missing required argument "id"`)
	}
	p, err := ps.get(env.outputsKey(), string(a.ID))
	if err != nil {
		return "", err
	}
	switch action {
	case "poll":
		return marshalResult(p.poll())
	case "log":
		n := a.Lines
		if n <= 0 {
			n = processLogLines
		}
		v := p.view()
		v.Output = tailLines(p.log, min(n, 500), env.maxOutput()-500)
		return marshalResult(v)
	case "wait":
		secs := a.Timeout
		if secs <= 0 {
			secs = processWaitDefault
		}
		select {
		case <-p.done:
		case <-time.After(time.Duration(min(secs, processWaitMax)) * time.Second):
		case <-ctx.Done():
			return "", fmt.Errorf("process wait: %w: %w (the process goes on)", ErrCancelled, ctx.Err())
		}
		return marshalResult(p.poll())
	case "kill":
		p.kill()
		return marshalResult(p.view())
	}
	return "", invalidArgs("process", `"action" must be start, poll, log, wait, kill or list, got %q`, action)
}

// start starts the call's command, once per call: the same call again
// (its activity retried while this worker lives) gets the same process.
func (ps *Processes) start(env Env, a processArgs) (processView, error) {
	command, workdir := a.Command, a.Workdir
	if strings.TrimSpace(command) == "" {
		return processView{}, invalidArgs("process", `"command" must not be empty`)
	}
	dir, err := env.terminalDir(strings.TrimSpace(workdir))
	if err != nil {
		return processView{}, err
	}
	key := fmt.Sprintf("%s/%s/%d/%s", env.outputsKey(), env.TurnID, env.ModelCall, env.CallID)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if id, ok := ps.byKey[key]; ok && env.CallID != "" {
		return ps.procs[id].view(), nil
	}
	running := 0
	for _, p := range ps.procs {
		if p.session == env.outputsKey() && p.view().Status == "running" {
			running++
		}
	}
	if running >= maxSessionProcesses {
		return processView{}, fmt.Errorf("process: %d processes run for this session already; kill one first", running)
	}
	ps.next++
	id := fmt.Sprintf("p%d", ps.next)
	logPath, err := processLogPath(env, id)
	if err != nil {
		return processView{}, err
	}
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return processView{}, fmt.Errorf("process: log file: %w", err)
	}
	jail := newConfinement()
	box, done := env.commandSandbox(dir)
	cmd, wait, err := startShell(command, dir, env.processEnv(), out, jail, box)
	out.Close()
	if err != nil {
		jail.release()
		done()
		return processView{}, fmt.Errorf("process: %w", err)
	}
	p := &bgProcess{id: id, session: env.outputsKey(), command: command, dir: dir, log: logPath, started: time.Now(),
		pgid: cmd.Process.Pid, jail: jail, done: make(chan struct{})}
	jail.started(p.pgid)
	go func() {
		waitErr := wait()
		code, err := exitCode(cmd, waitErr)
		if err != nil {
			code = -1
		}
		jail.release() // what it left behind goes with it
		done()         // then its git data comes back
		p.mu.Lock()
		p.exitCode, p.ended = code, time.Now()
		p.mu.Unlock()
		close(p.done)
	}()
	ps.procs[id], ps.byKey[key] = p, id
	return p.view(), nil
}

// processLogPath is where a process's output goes: the session's kept
// outputs when the worker keeps them, else a private temporary directory.
func processLogPath(env Env, id string) (string, error) {
	dir := ""
	if t := env.spillTarget(); t.base != "" {
		name, err := SessionDirName(t.session)
		if err != nil {
			return "", fmt.Errorf("process: %w", err)
		}
		dir = filepath.Join(t.base, name)
	} else {
		var err error
		if dir, err = os.MkdirTemp("", "talaria-process-"); err != nil {
			return "", fmt.Errorf("process: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("process: %w", err)
	}
	return filepath.Join(dir, fmt.Sprintf("process-%s-%s.log", id, randomHex(4))), nil
}

// get finds one of the session's processes.
func (ps *Processes) get(session, id string) (*bgProcess, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p, ok := ps.procs[id]
	if !ok || p.session != session {
		return nil, fmt.Errorf("%w for process: no process %q in this session (list shows them)", ErrInvalidArguments, id)
	}
	return p, nil
}

// list is the session's processes, oldest first.
func (ps *Processes) list(session string) []processView {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := []processView{}
	for _, p := range ps.procs {
		if p.session == session {
			out = append(out, p.view())
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Started < out[j].Started || out[i].Started == out[j].Started && out[i].ID < out[j].ID
	})
	return out
}

// RetiredFunc reports which of the conversations (lineage keys) are over:
// a chat moved on to a new session (a reset, /new).
type RetiredFunc func(ctx context.Context, keys []string) ([]string, error)

// Reap kills the running processes of the conversations retired reports
// over, and returns how many it killed.
func (ps *Processes) Reap(ctx context.Context, retired RetiredFunc) (int, error) {
	ps.mu.Lock()
	var keys []string
	for _, p := range ps.procs {
		if p.view().Status == "running" && !slices.Contains(keys, p.session) {
			keys = append(keys, p.session)
		}
	}
	ps.mu.Unlock()
	if len(keys) == 0 {
		return 0, nil
	}
	over, err := retired(ctx, keys)
	if err != nil {
		return 0, fmt.Errorf("processes of reset sessions: %w", err)
	}
	ps.mu.Lock()
	var doomed []*bgProcess
	for _, p := range ps.procs {
		if slices.Contains(over, p.session) && p.view().Status == "running" {
			doomed = append(doomed, p)
		}
	}
	ps.mu.Unlock()
	for _, p := range doomed {
		p.kill()
	}
	return len(doomed), nil
}

// Close kills every process (the worker stops).
func (ps *Processes) Close() {
	ps.mu.Lock()
	procs := make([]*bgProcess, 0, len(ps.procs))
	for _, p := range ps.procs {
		procs = append(procs, p)
	}
	ps.mu.Unlock()
	for _, p := range procs {
		p.kill()
	}
}

func (p *bgProcess) view() processView {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := processView{ID: p.id, Command: clipLine(p.command), Status: "running", Started: p.started.UTC().Format(time.RFC3339Nano), Log: p.log}
	if !p.ended.IsZero() {
		code := p.exitCode
		v.Status, v.ExitCode = "exited", &code
	}
	return v
}

// poll is the view with the output written since the last poll.
func (p *bgProcess) poll() processView {
	v := p.view()
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.Open(p.log)
	if err != nil {
		return v
	}
	defer f.Close()
	if _, err := f.Seek(p.polled, io.SeekStart); err != nil {
		return v
	}
	buf := make([]byte, processPollBytes+1)
	n, _ := io.ReadFull(f, buf)
	if n > processPollBytes {
		n, v.More = processPollBytes, true
	}
	p.polled += int64(n)
	v.Output = strings.ToValidUTF8(string(buf[:n]), "\uFFFD")
	return v
}

// kill stops the process and everything it started, and waits for it.
func (p *bgProcess) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	terminateGroup(p.pgid)
	p.jail.release()
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
}

// tailLines is the last n lines of the file at path, within maxChars.
func tailLines(path string, n, maxChars int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := strings.Join(lines, "\n")
	if maxChars > 0 && len(out) > maxChars {
		out = out[len(out)-maxChars:]
	}
	return out
}

// process is a built-in tool.
var _ = builtin(func(s Services) Tool { return Process(s.Processes) })
