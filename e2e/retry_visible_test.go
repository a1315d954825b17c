package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
)

// stampedLines is a writer that notes when each line of a process's output
// arrived.
type stampedLines struct {
	mu      sync.Mutex
	partial bytes.Buffer
	lines   []stampedLine
}

type stampedLine struct {
	at   time.Time
	text string
}

func (s *stampedLines) Write(p []byte) (int, error) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.partial.Write(p)
	for {
		line, err := s.partial.ReadString('\n')
		if err != nil { // no complete line left: keep the rest
			rest := line
			s.partial.Reset()
			s.partial.WriteString(rest)
			return len(p), nil
		}
		s.lines = append(s.lines, stampedLine{at: now, text: strings.TrimSuffix(line, "\n")})
	}
}

// first is the first line containing text.
func (s *stampedLines) first(text string) (stampedLine, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.lines {
		if strings.Contains(l.text, text) {
			return l, true
		}
	}
	return stampedLine{}, false
}

func (s *stampedLines) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, l := range s.lines {
		fmt.Fprintf(&b, "%s %s\n", l.at.Format("15:04:05.000"), l.text)
	}
	return b.String() + s.partial.String()
}

// TestRetryProgress: a model answering HTTP 500 twice, then a reply: chat
// shows a progress line for each failed attempt, saying what failed, its
// class and which attempt comes next, and when. How soon after the failure
// it shows (from when the fake server finished answering it) is logged
// here and measured by BenchmarkRetryProgress.
func TestRetryProgress(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.Step{Status: 500, ErrorMessage: "upstream exploded"},
		fakellm.Step{Status: 500, ErrorMessage: "upstream exploded again"},
		fakellm.TextStep("recovered after two failures"),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := u.command(ctx, "chat", "-q", "hello", "--session", "flaky")
	var out bytes.Buffer
	errOut := &stampedLines{}
	cmd.Stdout, cmd.Stderr = &out, errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chat: %v\nstdout: %s\nstderr:\n%s", err, out.String(), errOut)
	}
	t.Logf("stderr:\n%s", errOut)
	if !strings.Contains(out.String(), "recovered after two failures") {
		t.Fatalf("stdout %q", out.String())
	}
	reqs := model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	for i, want := range []string{"next attempt (2 of 6) in 1s", "next attempt (3 of 6) in 2s"} {
		line, ok := errOut.first(want)
		if !ok {
			t.Fatalf("no progress line %q on stderr:\n%s", want, errOut)
		}
		t.Logf("the notice of failure %d came %v after it", i+1, line.at.Sub(reqs[i].Finished).Round(time.Millisecond))
		for _, part := range []string{"⋯", "model call failed", "server_error", "HTTP 500", "upstream exploded"} {
			if !strings.Contains(line.text, part) {
				t.Errorf("progress line %q lacks %q", line.text, part)
			}
		}
	}
}

// TestUnreachableEndpointIsSaid: serve started with a model endpoint
// nobody listens on says so in one warning line and keeps serving; send
// delivers the message (exit 0) and warns in one line; status shows the
// turn's failing attempts and why they fail.
func TestUnreachableEndpointIsSaid(t *testing.T) {
	t.Parallel()
	dead := fmt.Sprintf("http://127.0.0.1:%d/v1", freePort(t))
	u := newUser(t, dead)
	srv := u.serve(0)
	serveErr := func() string {
		lw := srv.cmd.Stderr.(*lockedWriter)
		lw.mu.Lock()
		defer lw.mu.Unlock()
		return srv.stderr.String()
	}
	waitFor(t, 15*time.Second, func() bool { return strings.Contains(serveErr(), "talaria serve: warning:") })

	out, errOut, code := u.run(time.Minute, "send", "down", "hello there")
	if code != 0 || !strings.Contains(out, "sent to session down") {
		t.Fatalf("send: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	warning := strings.TrimSpace(errOut)
	t.Logf("send's warning: %s", warning)
	if strings.Count(warning, "\n") != 0 || !strings.Contains(warning, "talaria: warning:") || !strings.Contains(warning, dead) ||
		!strings.Contains(warning, "is unreachable") || !strings.Contains(warning, "talaria status down") {
		t.Fatalf("send's warning is not one line naming the endpoint and what to watch:\n%s", errOut)
	}

	// status shows the failing attempts: the next one, and why the last failed.
	var status string
	waitFor(t, time.Minute, func() bool {
		status, _, _ = u.run(time.Minute, "status", "down")
		return strings.Contains(status, "waiting: model call attempt") && strings.Contains(status, "last failure: model call failed (network)")
	})
	t.Logf("status:\n%s", status)
	if _, err := engine.ReadServeInfo(u.home); err != nil {
		t.Fatalf("serve stopped: %v\n%s", err, serveErr())
	}
	if _, _, code := u.run(time.Minute, "stop", "down"); code != 0 {
		t.Fatalf("stop: exit %d", code)
	}

	// One warning from serve, one line, naming the endpoint and that it
	// serves anyway.
	var warnings []string
	for _, l := range strings.Split(serveErr(), "\n") {
		if strings.Contains(l, "warning") && strings.Contains(l, "model endpoint") {
			warnings = append(warnings, l)
		}
	}
	t.Logf("serve's warnings: %q", warnings)
	if len(warnings) != 1 || !strings.Contains(warnings[0], dead) || !strings.Contains(warnings[0], "serving anyway") {
		t.Fatalf("serve's warnings about the endpoint: %q\n%s", warnings, serveErr())
	}
}

// TestReachableEndpointIsNotWarnedAbout: an endpoint that answers (even
// with an error status to GET /models) gives no warning from serve or send.
func TestReachableEndpointIsNotWarnedAbout(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("fine"))
	defer model.Close()
	u := newUser(t, model.URL())
	srv := u.serve(0)
	out, errOut, code := u.run(time.Minute, "send", "up", "hello")
	if code != 0 || !strings.Contains(out, "sent to session up") || strings.Contains(errOut, "warning") {
		t.Fatalf("send: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	waitFor(t, time.Minute, func() bool {
		status, _, _ := u.run(time.Minute, "status", "up")
		return strings.Contains(status, "session up: idle")
	})
	lw := srv.cmd.Stderr.(*lockedWriter)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if strings.Contains(srv.stderr.String(), "talaria serve: warning:") {
		t.Fatalf("serve warned about an endpoint that answers:\n%s", srv.stderr.String())
	}
}
