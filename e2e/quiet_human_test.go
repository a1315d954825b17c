package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// proc is a talaria command running in the background whose output can be
// watched as it comes.
type proc struct {
	t              testing.TB
	cmd            *exec.Cmd
	stdout, stderr *lockedWriter
	done           chan struct{}
	code           int
}

// start runs talaria in the background, stdin from /dev/null.
func (u *user) start(ctx context.Context, args ...string) *proc {
	u.t.Helper()
	p := &proc{t: u.t, cmd: u.command(ctx, args...), stdout: &lockedWriter{w: &bytes.Buffer{}},
		stderr: &lockedWriter{w: &bytes.Buffer{}}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		u.t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			p.code = exit.ExitCode()
		case err != nil:
			p.code = -1
		}
		close(p.done)
	}()
	u.t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	return p
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.(*bytes.Buffer).String()
}

// waitStderr waits until stderr shows text and returns it.
func (p *proc) waitStderr(text string, d time.Duration) string {
	p.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := p.stderr.String()
		if strings.Contains(s, text) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("stderr never showed %q within %s; it shows:\n%s", text, d, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wait waits for the command to exit and returns stdout, stderr and status.
func (p *proc) wait(d time.Duration) (string, string, int) {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		p.t.Fatalf("talaria %v did not exit within %s; stderr:\n%s", p.cmd.Args[1:], d, p.stderr.String())
	}
	return p.stdout.String(), p.stderr.String(), p.code
}

// storedTurns reads the turns of a session straight from the store file.
func (u *user) storedTurns(session string) []models.Turn {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := models.Open(ctx, filepath.Join(u.home, "talaria.db"))
	if err != nil {
		u.t.Fatal(err)
	}
	defer st.Close()
	turns, err := st.Turns(ctx, session)
	if err != nil {
		u.t.Fatal(err)
	}
	return turns
}

// dangerous is a model that wants to delete ./build, then answers.
func dangerous() *fakellm.Server {
	return fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "d1", Name: "terminal", Arguments: `{"command":"rm -rf ./build"}`}),
		fakellm.TextStep("I left ./build alone."),
	)
}

func (u *user) mkdir(name string) string {
	u.t.Helper()
	dir := filepath.Join(u.workdir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		u.t.Fatal(err)
	}
	return dir
}

// TestChatQApprovalNonInteractiveDeny: a one-shot chat with stdin from
// /dev/null says its session at once and, within 2 s of the turn asking
// for an approval, what is asked and how to answer; by default
// (approvals.noninteractive: deny) the command is refused at once, the
// refusal is shown and the turn completes. Without serve, embedded.
func TestChatQApprovalNonInteractiveDeny(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "b1", Name: "terminal", Arguments: `{"command":"rm -rf /"}`}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "d1", Name: "terminal", Arguments: `{"command":"rm -rf ./build"}`}),
		fakellm.TextStep("I left ./build alone."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	build := u.mkdir("build")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := u.start(ctx, "chat", "-q", "clean up", "--session", "nodeny")
	p.waitStderr("session: nodeny\n", time.Minute)
	if err := model.WaitRequests(ctx, 2); err != nil {
		t.Fatal(err)
	}
	asked := time.Now()
	p.waitStderr("talaria approve nodeny", 2*time.Second)
	t.Logf("the approval was shown %s after the model asked for the command", time.Since(asked).Round(time.Millisecond))
	stdout, stderr, code := p.wait(time.Minute)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"rm -rf ./build", "talaria deny nodeny", "✗ refused", "✗ terminal denied: not run",
		"✗ terminal blocked: "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stdout, "session:") || !strings.Contains(stdout, "I left ./build alone.") {
		t.Errorf("stdout must hold the answer only:\n%s", stdout)
	}
	if _, err := os.Stat(build); err != nil {
		t.Fatal("the refused command ran")
	}
	if got := toolResults(model)["d1"]; !strings.HasPrefix(got, "DENIED") {
		t.Fatalf("the model read %q, want the refusal", got)
	}
	t.Logf("stderr:\n%s", stderr)
}

// TestChatQApprovalWait: with approvals.noninteractive: wait, the one-shot
// chat says how to answer and waits; `talaria approve SESSION` from
// another process lets the command run.
func TestChatQApprovalWait(t *testing.T) {
	t.Parallel()
	model := dangerous()
	defer model.Close()
	u := newUser(t, model.URL())
	writeConfig("approvals:\n  noninteractive: wait\n")(t, u)
	build := u.mkdir("build")
	u.serve(freePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := u.start(ctx, "chat", "--json", "-q", "clean up", "--session", "nowait")
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	asked := time.Now()
	p.waitStderr("talaria approve nowait [--session|--always]", 2*time.Second)
	t.Logf("the approval was shown %s after the model asked for the command", time.Since(asked).Round(time.Millisecond))
	p.waitStderr("waiting for a decision", time.Second)
	if _, err := os.Stat(build); err != nil {
		t.Fatal("the command ran before it was approved")
	}
	if out, stderr, code := u.run(time.Minute, "approve", "nowait"); code != 0 {
		t.Fatalf("approve: exit %d %s%s", code, out, stderr)
	}
	stdout, stderr, code := p.wait(time.Minute)
	res := decodeResult(t, stdout, stderr)
	if code != 0 || !res.Completed {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	if _, err := os.Stat(build); !os.IsNotExist(err) {
		t.Fatal("the approved command did not run")
	}
	if !strings.HasPrefix(stderr, "session: nowait\n") {
		t.Errorf("stderr does not start with the session:\n%s", stderr)
	}
}

// TestChatQApprovalTerminal: on a terminal the one-shot chat asks inline,
// as the interactive chat does, and an answer typed there is followed.
func TestChatQApprovalTerminal(t *testing.T) {
	t.Parallel()
	model := dangerous()
	defer model.Close()
	u := newUser(t, model.URL())
	build := u.mkdir("build")
	u.serve(0)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	term := u.terminal(ctx, "chat", "-q", "clean up", "--session", "notty")
	term.waitScreen("session: notty", time.Minute)
	s := term.waitScreen("approve? [o]nce", time.Minute)
	if !strings.Contains(s, "talaria approve notty") {
		t.Errorf("the prompt does not say how to answer from elsewhere:\n%s", s)
	}
	if _, err := os.Stat(build); err != nil {
		t.Fatal("the command ran before it was approved")
	}
	term.type_("o\r")
	term.waitScreen("I left ./build alone.", time.Minute)
	select {
	case <-term.done:
	case <-time.After(30 * time.Second):
		t.Fatal("chat -q did not exit after its turn")
	}
	if _, err := os.Stat(build); !os.IsNotExist(err) {
		t.Fatal("the command approved on the terminal did not run")
	}
}

// asking is a model that asks the user which colour, then answers.
func asking() *fakellm.Server {
	return fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "q1", Name: "clarify", Arguments: `{"question":"Which colour should the button be?","choices":["red","blue"]}`}),
		fakellm.TextStep("Going with my best guess."),
	)
}

// TestChatQClarifyNonInteractive: a question asked of a one-shot chat with
// stdin from /dev/null is shown with how to answer it, and answered at
// once (by default) with "no one is available": the model reads that and
// the turn completes.
func TestChatQClarifyNonInteractive(t *testing.T) {
	t.Parallel()
	model := asking()
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := u.start(ctx, "chat", "--json", "-q", "style the button", "--session", "noask")
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	asked := time.Now()
	p.waitStderr(`talaria answer noask "TEXT"`, 2*time.Second)
	t.Logf("the question was shown %s after the model asked it", time.Since(asked).Round(time.Millisecond))
	stdout, stderr, code := p.wait(time.Minute)
	res := decodeResult(t, stdout, stderr)
	if code != 0 || !res.Completed {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	for _, want := range []string{"Which colour should the button be?", "2. blue", "session: noask", "answered: no one is available"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if got := toolResults(model)["q1"]; got != workflows.NoUserAnswer {
		t.Fatalf("the model read %q", got)
	}
}

// TestChatQClarifyTerminal: on a terminal the question is asked inline and
// the choice typed there is the answer.
func TestChatQClarifyTerminal(t *testing.T) {
	t.Parallel()
	model := asking()
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	term := u.terminal(ctx, "chat", "-q", "style the button", "--session", "asktty")
	s := term.waitScreen("your answer: ", time.Minute)
	if !strings.Contains(s, "Which colour should the button be?") || !strings.Contains(s, `talaria answer asktty "TEXT"`) {
		t.Errorf("the question is not shown with how to answer it:\n%s", s)
	}
	term.type_("2\r")
	term.waitScreen("Going with my best guess.", time.Minute)
	if got := toolResults(model)["q1"]; got != "blue" {
		t.Fatalf("the model read %q, want the choice typed", got)
	}
}

// interruptChat starts a one-shot chat whose model call hangs, presses
// Ctrl-C (SIGINT) once the call is under way, and returns what it printed.
func interruptChat(t *testing.T, u *user, model *fakellm.Server, session string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := u.start(ctx, append([]string{"chat", "-q", "write an essay", "--session", session}, args...)...)
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	return p.wait(time.Minute)
}

// noRunningTurn fails when the store still records a turn of the session
// as running.
func noRunningTurn(t *testing.T, u *user, session string) {
	t.Helper()
	turns := u.storedTurns(session)
	if len(turns) == 0 {
		t.Fatalf("session %s has no turn recorded", session)
	}
	for _, tr := range turns {
		if tr.Status == "running" {
			t.Fatalf("turn %s is still recorded running", tr.ID)
		}
	}
}

// TestChatQInterruptWithServe: Ctrl-C on a one-shot chat served by serve
// interrupts the turn (it does not go on in the background), prints one
// line, and exits 130; --json still prints one result.
func TestChatQInterruptWithServe(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.Step{Hang: true})
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	stdout, stderr, code := interruptChat(t, u, model, "intserve", "--json")
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr)
	}
	res := decodeResult(t, stdout, stderr)
	if !res.Interrupted || res.TurnExitReason != workflows.StopInterrupted {
		t.Fatalf("result %+v", res)
	}
	if strings.Contains(stderr, "context canceled") {
		t.Errorf("stderr:\n%s", stderr)
	}
	out, _, scode := u.run(time.Minute, "status", "intserve", "--json")
	var st struct {
		Turn *workflows.Progress `json:"turn"`
	}
	if scode != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Turn != nil {
		t.Fatalf("status after Ctrl-C: exit %d %s", scode, out)
	}
	noRunningTurn(t, u, "intserve")
}

// TestChatQInterruptEmbedded: without serve, Ctrl-C interrupts the turn
// before the embedded server stops: the store records it interrupted, the
// text output is one line without "context canceled", exit 130.
func TestChatQInterruptEmbedded(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.Step{Hang: true})
	defer model.Close()
	u := newUser(t, model.URL())
	stdout, stderr, code := interruptChat(t, u, model, "intemb")
	if code != 130 {
		t.Fatalf("exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "context canceled") || strings.Count(stderr, "turn ended: interrupted") != 1 {
		t.Errorf("stderr:\n%s", stderr)
	}
	noRunningTurn(t, u, "intemb")
}

// TestChatQInterruptTwice: a second Ctrl-C quits at once, still 130.
func TestChatQInterruptTwice(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.Step{Hang: true})
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := u.start(ctx, "chat", "--json", "-q", "write an essay", "--session", "inttwice")
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	p.waitStderr("Ctrl-C again to quit", 10*time.Second)
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	stdout, stderr, code := p.wait(30 * time.Second)
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr)
	}
	if res := decodeResult(t, stdout, stderr); !res.Interrupted {
		t.Fatalf("result %+v", res)
	}
}

// waitForPeople makes a one-shot chat without a terminal wait for
// `talaria approve/deny/answer` (approvals.noninteractive: wait) instead of
// refusing at once: for tests that answer from another process.
func (u *user) waitForPeople() {
	u.t.Helper()
	writeConfig("approvals:\n  noninteractive: wait\n")(u.t, u)
}

// TestChatQInterruptKilledRepaired: an embedded chat killed (SIGKILL)
// mid-turn leaves its turn recorded running. When Temporal's data is gone
// too (reset, or a new server), the next start finds the turn without a
// workflow and records it interrupted, with a note, instead of leaving it
// running for ever.
func TestChatQInterruptKilledRepaired(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.Step{Hang: true}, fakellm.TextStep("hello again"))
	defer model.Close()
	u := newUser(t, model.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := u.start(ctx, "chat", "-q", "write an essay", "--session", "killed")
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait(30 * time.Second)
	turns := u.storedTurns("killed")
	if len(turns) != 1 || turns[0].Status != "running" {
		t.Fatalf("after SIGKILL the store holds %+v, want one running turn", turns)
	}
	if err := os.RemoveAll(filepath.Join(u.home, "temporal")); err != nil {
		t.Fatal(err)
	}
	res, stderr, code := u.chatJSON(2*time.Minute, "-q", "hi", "--session", "next")
	if code != 0 || !res.Completed {
		t.Fatalf("the next chat: exit %d %+v\n%s", code, res, stderr)
	}
	noRunningTurn(t, u, "killed")
	if got := u.storedTurns("killed")[0]; got.Status != "interrupted" || !strings.Contains(got.Error, "workflow is gone") {
		t.Fatalf("the orphan turn is recorded %+v", got)
	}
}

// TestChatQFailedTurnPlain: a turn that fails says so on stderr in one
// plain line, without Temporal's decorations, and --json carries its
// turn id.
func TestChatQFailedTurnPlain(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.Step{Status: 401}, fakellm.Step{Status: 401})
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	_, stderr, code := u.run(2*time.Minute, "chat", "-q", "hi", "--session", "failtext")
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	t.Logf("stderr:\n%s", stderr)
	for _, noise := range []string{"(type:", "retryable:", "workflowID:", "runID:", "scheduledEventID"} {
		if strings.Contains(stderr, noise) {
			t.Errorf("stderr shows Temporal's %q:\n%s", noise, stderr)
		}
	}
	if !strings.Contains(stderr, "turn ended: error") {
		t.Errorf("stderr does not say the turn failed:\n%s", stderr)
	}
	res, stderr, code := u.chatJSON(2*time.Minute, "-q", "hi again", "--session", "failjson")
	if code != 1 || res.Completed || res.TurnID == "" {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
}
