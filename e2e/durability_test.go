package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// TestServeKilledMidModelCall: `talaria serve` is SIGKILLed while a turn's
// model call is in flight; after a restart on the same TALARIA_HOME the same
// turn completes, its earlier tool ran exactly once, and no message is lost
// or duplicated. The chat client rides out the restart. The heartbeat
// timeout is the default (10 s): the restarted serve retries the dead
// call at once (engine takeOver), and the test reports how soon after its
// ready line the call came again.
func TestServeKilledMidModelCall(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("restarts a server")
	}
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "call_append", Name: "terminal",
			Arguments: `{"command":"echo ran >> side-effects.log"}`}),
		fakellm.Step{Hang: true}, // in flight when serve dies
		fakellm.TextStep("Appended one line."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	port := freePort(t)
	srv := u.serve(port)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	chat := u.command(ctx, "chat", "--json", "-q", "append a line", "--session", "durable")
	var out, errOut bytes.Buffer
	chat.Stdout, chat.Stderr = &out, &lockedWriter{w: &errOut}
	if err := chat.Start(); err != nil {
		t.Fatal(err)
	}
	chatDone := make(chan error, 1)
	go func() { chatDone <- chat.Wait() }()

	if err := model.WaitRequests(ctx, 2); err != nil {
		t.Fatalf("the second model call never arrived: %v\nchat stderr:\n%s", err, errOut.String())
	}
	srv.kill()
	killedAt := time.Now()
	u.serve(port)
	readyAt := time.Now()
	if err := model.WaitRequests(ctx, 3); err != nil {
		t.Fatalf("the model call was never retried: %v", err)
	}
	resumedAt := time.Now()
	t.Logf("restart: serve ready %s after SIGKILL; the in-flight model call retried %s after that (default heartbeat timeout, 10s)",
		readyAt.Sub(killedAt).Round(time.Millisecond), resumedAt.Sub(readyAt).Round(time.Millisecond))
	if path := os.Getenv("TALARIA_REPORT"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "restart_to_resume serve_ready=%s resumed_after_ready=%s heartbeat_timeout=10s\n",
				readyAt.Sub(killedAt).Round(time.Millisecond), resumedAt.Sub(readyAt).Round(time.Millisecond))
			f.Close()
		}
	}
	restartedAt := readyAt

	select {
	case err := <-chatDone:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		if err != nil {
			t.Fatalf("chat exit %v\nstderr:\n%s\nstdout:\n%s", err, errOut.String(), out.String())
		}
	case <-ctx.Done():
		t.Fatalf("chat did not finish\nstderr:\n%s", errOut.String())
	}
	t.Logf("turn resumed and finished %s after the restart", time.Since(restartedAt).Round(time.Millisecond))

	res := decodeResult(t, out.String(), errOut.String())
	if !res.Completed || res.TurnExitReason != workflows.StopTextResponse || res.APICalls != 2 {
		t.Fatalf("result = %+v", res)
	}
	if res.TurnID != workflows.TurnWorkflowID("durable", 1) {
		t.Fatalf("turn id = %s", res.TurnID)
	}
	log, err := os.ReadFile(filepath.Join(u.workdir, "side-effects.log"))
	if err != nil || string(log) != "ran\n" {
		t.Fatalf("side effect ran %d times (%q, %v)", strings.Count(string(log), "ran"), log, err)
	}
	if got := roles(res.Messages); got != "user,assistant,tool,assistant" {
		t.Fatalf("messages = %s", got)
	}
	assertPaired(t, res.Messages)
	if *res.FinalResponse != "Appended one line." {
		t.Fatalf("final = %q", *res.FinalResponse)
	}
	reqs := model.Requests()
	if len(reqs) != 3 || !reqs[1].Cancelled {
		t.Fatalf("model saw %d requests; in-flight one cancelled=%v", len(reqs), len(reqs) > 1 && reqs[1].Cancelled)
	}
}

// TestServeSharesWithChat: chat finds a running serve and sends its turn
// there; tools still run in chat's working directory; SIGTERM stops serve
// cleanly.
func TestServeSharesWithChat(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{Name: "write_file", Arguments: `{"path":"from-chat.txt","content":"x"}`}),
		fakellm.TextStep("Wrote it."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	srv := u.serve(0)
	res, stderr, code := u.chatJSON(2*time.Minute, "-q", "write")
	if code != 0 || !res.Completed {
		t.Fatalf("exit %d: %+v\n%s", code, res, stderr)
	}
	if _, err := os.Stat(filepath.Join(u.workdir, "from-chat.txt")); err != nil {
		t.Fatalf("tool did not run in chat's directory: %v", err)
	}
	// A second serve on the same home is refused.
	_, stderr, code = u.run(time.Minute, "serve", "--temporal-port", "0")
	if code != 2 || !strings.Contains(stderr, "in use") {
		t.Fatalf("second serve: exit %d, %s", code, stderr)
	}
	if err := srv.stop(t); err != nil {
		t.Fatalf("serve exit after SIGTERM: %v\n%s", err, srv.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(u.home, "serve.json")); !os.IsNotExist(err) {
		t.Fatalf("serve.json left behind: %v", err)
	}
}
