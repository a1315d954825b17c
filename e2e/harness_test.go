package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/workflows"
)

// binary is the talaria binary built once for the whole package.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "talaria-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "talaria")
	build := exec.Command("go", "build", "-o", binary, "./cmd/talaria")
	build.Dir = ".."
	build.Env = append(os.Environ(), "GOTOOLCHAIN=go1.27.3", "CGO_ENABLED=0") // static, as make build
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build talaria:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// user is one person at a terminal: a TALARIA_HOME, a working directory and
// an environment.
type user struct {
	t       testing.TB
	home    string
	workdir string
	env     map[string]string
}

func newUser(t testing.TB, modelURL string) *user {
	t.Helper()
	root := t.TempDir()
	u := &user{t: t, home: filepath.Join(root, "home"), workdir: filepath.Join(root, "work"), env: map[string]string{
		"TALARIA_HOME":    filepath.Join(root, "home"),
		"OPENAI_BASE_URL": modelURL,
		"OPENAI_API_KEY":  "test-key",
		"TALARIA_MODEL":   "fake-model",
	}}
	if err := os.MkdirAll(u.workdir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logWarnings(t, u)
		}
	})
	return u
}

// logWarnings puts the last warnings and errors of each of u's log files
// in a failed test's output: what the processes saw goes with the failure.
func logWarnings(t testing.TB, u *user) {
	files, _ := filepath.Glob(filepath.Join(u.home, "logs", "*.log"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var lines []string
		for _, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
				lines = append(lines, l)
			}
		}
		if n := len(lines); n > 30 {
			lines = lines[n-30:]
		}
		if len(lines) > 0 {
			t.Logf("the last warnings of %s:\n%s", filepath.Base(f), strings.Join(lines, "\n"))
		}
	}
}

func (u *user) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = u.workdir
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range u.env {
		env = append(env, k+"="+v)
	}
	cmd.Env = env
	return cmd
}

// run runs talaria to completion and returns stdout, stderr and exit status.
func (u *user) run(timeout time.Duration, args ...string) (string, string, int) {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := u.command(ctx, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		u.t.Fatalf("run talaria %v: %v", args, err)
	}
	if ctx.Err() != nil {
		u.t.Fatalf("talaria %v timed out; stderr:\n%s", args, errOut.String())
	}
	return out.String(), errOut.String(), code
}

// chatJSON runs a one-shot chat with --json and decodes the result.
func (u *user) chatJSON(timeout time.Duration, args ...string) (workflows.ConversationResult, string, int) {
	u.t.Helper()
	stdout, stderr, code := u.run(timeout, append([]string{"chat", "--json"}, args...)...)
	return decodeResult(u.t, stdout, stderr), stderr, code
}

func decodeResult(t testing.TB, stdout, stderr string) workflows.ConversationResult {
	t.Helper()
	var res workflows.ConversationResult
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", stdout)
	}
	return res
}

// server is a running `talaria serve`.
type server struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan error
}

// serve starts `talaria serve` on port and waits until clients can use it.
func (u *user) serve(port int) *server {
	u.t.Helper()
	// No Web UI: parallel tests would race for its default port (ui_test.go tests it).
	cmd := u.command(context.Background(), "serve", "--temporal-port", fmt.Sprint(port), "--ui-port", "0")
	s := &server{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = &lockedWriter{w: s.stderr}
	if err := cmd.Start(); err != nil {
		u.t.Fatalf("start serve: %v", err)
	}
	go func() { s.done <- cmd.Wait() }()
	u.t.Cleanup(func() { s.kill() })
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			u.t.Fatalf("serve exited early: %v\n%s", err, s.stderr.String())
		default:
		}
		if info, err := engine.ReadServeInfo(u.home); err == nil && info.PID == cmd.Process.Pid {
			if c, err := net.DialTimeout("tcp", info.TemporalAddress, time.Second); err == nil {
				c.Close()
				return s
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	u.t.Fatalf("serve did not become ready:\n%s", s.stderr.String())
	return nil
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
	}
}

// stop sends SIGTERM and returns the exit error.
func (s *server) stop(t *testing.T) error {
	t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30s of SIGTERM")
		return nil
	}
}

// given are the ports freePort has handed out in this process.
var given struct {
	sync.Mutex
	ports map[int]bool
}

// freePort is a loopback port free now that no other test of this package
// was given: one below the kernel's ephemeral range, so no port-0 listener
// or outgoing connection of a test running beside it takes the port before
// its process binds it.
func freePort(t testing.TB) int {
	t.Helper()
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 2048 {
				low = n
			}
		}
	}
	first := max(1024, low-12000)
	given.Lock()
	defer given.Unlock()
	if given.ports == nil {
		given.ports = map[int]bool{}
	}
	for range 10000 {
		p := first + rand.IntN(low-first)
		if given.ports[p] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		l.Close()
		given.ports[p] = true
		return p
	}
	t.Fatal("no free loopback port below the ephemeral range")
	return 0
}
