package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// temporalNoise are the marks of a Temporal (SDK or server) log line or of
// a raw slog record: none may reach a user's terminal.
var temporalNoise = []string{"WorkerID=", "RunID=", "Namespace=", "TaskQueue=", "level=", "msg=", "Activity error.", "ActivityType="}

// assertQuietTerminal fails when what reached a terminal holds a Temporal
// log line.
func assertQuietTerminal(t *testing.T, what, stderr string) {
	t.Helper()
	for _, mark := range temporalNoise {
		if strings.Contains(stderr, mark) {
			t.Errorf("%s: a Temporal log line (%q) reached the terminal:\n%s", what, mark, stderr)
		}
	}
}

// loggedProc is a talaria process whose output is kept.
type loggedProc struct {
	cmd         *exec.Cmd
	out, errOut *keptOutput
	done        chan struct{}
}

func (u *user) startLogged(ctx context.Context, args ...string) *loggedProc {
	u.t.Helper()
	p := &loggedProc{cmd: u.command(ctx, args...), out: &keptOutput{}, errOut: &keptOutput{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.errOut
	if err := p.cmd.Start(); err != nil {
		u.t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	u.t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// keptOutput is a process's output, written and read concurrently.
type keptOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (k *keptOutput) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.buf.Write(p)
}

func (k *keptOutput) String() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.buf.String()
}

func (p *loggedProc) wait(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("talaria %v did not end within %v; stderr:\n%s", p.cmd.Args[1:], d, p.errOut.String())
	}
}

func readLog(t *testing.T, u *user, kind string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(u.home, "logs", kind+".log"))
	if err != nil {
		t.Fatalf("the %s log: %v", kind, err)
	}
	return string(data)
}

// TestNoTemporalLogsOnTerminal: during chats whose model calls fail and
// are retried and whose turns are interrupted (Ctrl-C on a one-shot chat,
// `talaria stop` on a turn of serve), no Temporal log line reaches any
// terminal; the log files hold them, `talaria logs` shows them and
// `talaria logs -f` follows a new one.
func TestNoTemporalLogsOnTerminal(t *testing.T) {
	t.Parallel()
	model := fakellm.New()
	defer model.Close()
	var mu sync.Mutex
	failures := map[string]int{} // by message: the first two calls fail
	model.SetResponder(func(req fakellm.Request) fakellm.Step {
		last := req.Body.Messages[len(req.Body.Messages)-1]
		mu.Lock()
		defer mu.Unlock()
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "retry") && failures[last.Content] < 2:
			failures[last.Content]++
			return fakellm.ErrorStep(500, "upstream exploded")
		case last.Role == "user" && strings.Contains(last.Content, "sleep"):
			return fakellm.ToolStep(fakellm.ToolCall{Name: "terminal", Arguments: `{"command":"sleep 41.5"}`})
		case last.Role == "user" && strings.Contains(last.Content, "hang"):
			return fakellm.Step{Hang: true}
		}
		return fakellm.TextStep("done")
	})
	u := newUser(t, model.URL())
	u.env["TALARIA_LOG_LEVEL"] = "warn"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// 1. A one-shot chat (embedded Temporal) whose model fails twice with
	// HTTP 500 before answering.
	out, stderr, code := u.run(2*time.Minute, "chat", "-q", "retry please", "--session", "retries")
	if code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("chat with retries: exit %d\n%s\n%s", code, out, stderr)
	}
	assertQuietTerminal(t, "chat with retries", stderr)

	// 2. Ctrl-C on a one-shot chat while its model call hangs.
	p := u.startLogged(ctx, "chat", "-q", "hang on", "--session", "ctrlc")
	waitFor(t, time.Minute, func() bool {
		for _, r := range model.Requests() {
			if strings.Contains(r.Body.Messages[len(r.Body.Messages)-1].Content, "hang") {
				return true
			}
		}
		return false
	})
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	p.wait(t, time.Minute)
	assertQuietTerminal(t, "chat interrupted by Ctrl-C", p.errOut.String())

	chatLog := readLog(t, u, "chat")
	for _, want := range []string{`msg="Activity error."`, "WorkerID=", "upstream exploded"} {
		if !strings.Contains(chatLog, want) {
			t.Errorf("the chat log lacks %q:\n%s", want, chatLog)
		}
	}

	// 3. serve runs the turns: retries, then `talaria stop` while a tool runs.
	srv := u.serve(0)
	out, stderr, code = u.run(2*time.Minute, "chat", "-q", "retry again", "--session", "served")
	if code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("served chat with retries: exit %d\n%s\n%s", code, out, stderr)
	}
	assertQuietTerminal(t, "served chat with retries", stderr)
	bg := u.startLogged(ctx, "chat", "-q", "sleep a while", "--session", "stopped")
	waitFor(t, time.Minute, func() bool { return exec.Command("pgrep", "-f", "sleep 41.5").Run() == nil })
	_, stopErr, code := u.run(time.Minute, "stop", "stopped")
	if code != 0 {
		t.Fatalf("stop: exit %d\n%s", code, stopErr)
	}
	assertQuietTerminal(t, "stop", stopErr)
	bg.wait(t, time.Minute)
	assertQuietTerminal(t, "chat stopped by talaria stop", bg.errOut.String())

	// 4. talaria logs shows them; logs -f follows a new line.
	logsOut, logsErr, code := u.run(time.Minute, "logs", "-n", "10000")
	if code != 0 || !strings.Contains(logsOut, `chat: time=`) || !strings.Contains(logsOut, `serve: time=`) ||
		!strings.Contains(logsOut, "Activity error.") {
		t.Fatalf("talaria logs: exit %d\n%s\n%s", code, logsOut, logsErr)
	}
	// A line per message handed over and per turn ended; a stop is no error.
	for _, want := range []string{`msg="message handed to the session" session=served`, `msg="turn ended" session=served`,
		`msg="turn ended" session=stopped`, "stop_reason=interrupted"} {
		if !strings.Contains(logsOut, want) {
			t.Errorf("talaria logs lacks %q", want)
		}
	}
	for _, line := range strings.Split(logsOut, "\n") {
		if strings.Contains(line, "level=ERROR") && strings.Contains(strings.ToLower(line), "cancel") {
			t.Errorf("a routine stop logged as an error: %s", line)
		}
	}
	follow := u.startLogged(ctx, "logs", "-f", "-n", "0")
	time.Sleep(time.Second) // following from the current end
	if _, stderr, code := u.run(2*time.Minute, "chat", "-q", "retry with a follower", "--session", "followme"); code != 0 {
		t.Fatalf("chat followed: exit %d\n%s", code, stderr)
	}
	waitFor(t, 30*time.Second, func() bool { return strings.Contains(follow.out.String(), "followme") })
	if !strings.Contains(follow.out.String(), "serve: time=") {
		t.Fatalf("logs -f printed:\n%s", follow.out.String())
	}

	if err := srv.stop(t); err != nil {
		t.Fatalf("serve stop: %v\n%s", err, srv.stderr.String())
	}
	assertQuietTerminal(t, "serve", srv.stderr.String())
	serveLog := readLog(t, u, "serve")
	for _, want := range []string{`msg="Activity error."`, "WorkerID=", "upstream exploded"} {
		if !strings.Contains(serveLog, want) {
			t.Errorf("the serve log lacks %q", want)
		}
	}
	for _, kind := range []string{"chat", "serve"} {
		if st, err := os.Stat(filepath.Join(u.home, "logs", kind+".log")); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s.log: mode %v, %v", kind, st.Mode(), err)
		}
	}
}

// TestDebugLogsReachTheTerminal: with --log-level debug (before or after
// the command) Temporal's lines reach the terminal too.
func TestDebugLogsReachTheTerminal(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("done"))
	defer model.Close()
	u := newUser(t, model.URL())
	_, stderr, code := u.run(2*time.Minute, "--log-level", "debug", "chat", "-q", "hello")
	if code != 0 || !strings.Contains(stderr, "WorkerID=") {
		t.Fatalf("debug chat: exit %d, stderr without Temporal lines:\n%s", code, stderr)
	}
}
