package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/pgtest"
	"github.com/talaria-agent/talaria/workflows"
)

// TestServePausesWhileDatabaseAway: serve on PostgreSQL whose database goes
// away during a turn's model call says once that it stops taking work,
// takes none while the database is away (the model is not called again),
// says when it answers again, and the turn completes with the reply of the
// call that was in flight (a pause never cancels running work); no failed
// attempt is logged as an error.
func TestServePausesWhileDatabaseAway(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a database outage")
	}
	proxied, proxy := pgtest.Proxied(t, pgtest.DSN(t, "outage"))

	model := fakellm.New(
		fakellm.Step{Text: "answered through the outage", Delay: 20 * time.Second},
		fakellm.TextStep("a second call"),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	u.env["TALARIA_DB"] = proxied
	srv := u.serve(0)
	serveSaid := func() string {
		w := srv.cmd.Stderr.(*lockedWriter)
		w.mu.Lock()
		defer w.mu.Unlock()
		return srv.stderr.String()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	chat := u.command(ctx, "chat", "--json", "--session", "outage", "-q", "hello")
	var out, errOut bytes.Buffer
	errW := &lockedWriter{w: &errOut}
	chat.Stdout, chat.Stderr = &out, errW
	chatSaid := func() string {
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
		t.Fatalf("the model was not called: %v\n%s", err, chatSaid())
	}

	proxy.Down()
	const paused = "talaria serve: the store does not answer: serve stops taking work until it does ("
	waitFor(t, 30*time.Second, func() bool { return strings.Contains(serveSaid(), paused) })
	// Work is paused: nothing calls the model while the database is away.
	time.Sleep(5 * time.Second)
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("the model was called %d times during the outage, want only the call in flight before it", n)
	}
	select {
	case err := <-chatDone:
		t.Fatalf("chat ended during the outage: %v\n%s%s", err, out.String(), chatSaid())
	default:
	}

	proxy.Up()
	waitFor(t, 30*time.Second, func() bool {
		return strings.Contains(serveSaid(), "talaria serve: the store answers again: serve takes work again\n")
	})
	select {
	case err := <-chatDone:
		if err != nil {
			t.Fatalf("chat: %v\n%s", err, chatSaid())
		}
	case <-ctx.Done():
		t.Fatalf("the turn did not complete after the outage:\nserve:\n%s\nchat:\n%s", serveSaid(), chatSaid())
	}
	res := decodeResult(t, out.String(), chatSaid())
	if !res.Completed || res.TurnExitReason != workflows.StopTextResponse || res.FinalResponse == nil || *res.FinalResponse != "answered through the outage" || res.APICalls != 1 {
		t.Fatalf("result = %+v", res)
	}
	if n := strings.Count(serveSaid(), "does not answer"); n != 1 {
		t.Errorf("serve said %d times that the store does not answer, want once:\n%s", n, serveSaid())
	}
	for _, noise := range []string{"Activity error", "panic", "goroutine "} {
		if strings.Contains(serveSaid(), noise) || strings.Contains(chatSaid(), noise) {
			t.Errorf("%q logged:\nserve:\n%s\nchat:\n%s", noise, serveSaid(), chatSaid())
		}
	}
	t.Logf("serve said:\n%s\nchat said:\n%s", serveSaid(), chatSaid())
}
