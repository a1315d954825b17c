package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// TestChatSaysWhenServeStopsAnswering: serve is SIGKILLed while chat waits
// for a slow model; chat says within seconds, in one line, that serve
// stopped answering and keeps waiting; when serve is started again the
// turn completes and chat exits 0.
func TestChatSaysWhenServeStopsAnswering(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("restarts a server")
	}
	model := fakellm.New(
		fakellm.Step{Text: "never delivered", Delay: time.Minute}, // in flight when serve dies
		fakellm.TextStep("done after the restart"),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	u.env["TALARIA_HEARTBEAT_TIMEOUT"] = "3s"
	port := freePort(t)
	srv := u.serve(port)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	chat := u.command(ctx, "chat", "--json", "--session", "watched", "-q", "take your time")
	var out, errOut bytes.Buffer
	errW := &lockedWriter{w: &errOut}
	chat.Stdout, chat.Stderr = &out, errW
	stderr := func() string {
		errW.mu.Lock()
		defer errW.mu.Unlock()
		return errOut.String()
	}
	if err := chat.Start(); err != nil {
		t.Fatal(err)
	}
	chatDone := make(chan error, 1)
	go func() { chatDone <- chat.Wait() }()
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatalf("the model was not called: %v\n%s", err, stderr())
	}

	srv.kill()
	killed := time.Now()
	stopped := fmt.Sprintf("talaria: talaria serve at 127.0.0.1:%d stopped answering; the turn goes on when it is back, and this client waits for it (Ctrl-C stops waiting)\n", port)
	waitFor(t, 15*time.Second, func() bool { return strings.Contains(stderr(), stopped) })
	t.Logf("chat said serve stopped answering %s after the kill", time.Since(killed).Round(100*time.Millisecond))
	select {
	case err := <-chatDone:
		t.Fatalf("chat gave up while serve was away: %v\n%s", err, stderr())
	case <-time.After(2 * time.Second):
	}
	if n := strings.Count(stderr(), "stopped answering"); n != 1 {
		t.Errorf("said %d times that serve stopped answering, want once:\n%s", n, stderr())
	}

	u.serve(port)
	select {
	case err := <-chatDone:
		if err != nil {
			t.Fatalf("chat: %v\n%s", err, stderr())
		}
	case <-ctx.Done():
		t.Fatalf("the turn did not complete after serve came back:\n%s", stderr())
	}
	res := decodeResult(t, out.String(), stderr())
	if !res.Completed || res.TurnExitReason != workflows.StopTextResponse || res.FinalResponse == nil || *res.FinalResponse != "done after the restart" {
		t.Fatalf("result = %+v\n%s", res, stderr())
	}
	// When the turn ends before the next check, its result says serve is
	// back; otherwise chat says so, once.
	if n := strings.Count(stderr(), "answers again"); n > 1 {
		t.Errorf("said %d times that serve answers again:\n%s", n, stderr())
	}
	for _, noise := range []string{"level=WARN", "level=ERROR", "panic", "goroutine "} {
		if strings.Contains(stderr(), noise) {
			t.Errorf("chat stderr holds %q:\n%s", noise, stderr())
		}
	}
	t.Logf("chat stderr:\n%s", stderr())
}
