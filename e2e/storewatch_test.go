package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestServeStopsWhenStoreRemoved: deleting talaria.db under a running serve
// while a turn waits for a slow model stops serve with one clear line and
// a failure status; the turn is never reported completed, and the store is
// not created again.
func TestServeStopsWhenStoreRemoved(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.TextStep("first answer"),
		fakellm.Step{Text: "late answer", Delay: 6 * time.Second},
	)
	defer model.Close()
	u := newUser(t, model.URL())
	srv := u.serve(0)

	res, stderr, code := u.chatJSON(2*time.Minute, "--session", "watched", "-q", "hello")
	if code != 0 || !res.Completed {
		t.Fatalf("first turn: exit %d, %+v\n%s", code, res, stderr)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	chat := u.command(ctx, "chat", "--json", "--session", "watched", "-q", "slow one")
	var chatOut, chatErr bytes.Buffer
	outW, errW := &lockedWriter{w: &chatOut}, &lockedWriter{w: &chatErr}
	chat.Stdout, chat.Stderr = outW, errW
	read := func(l *lockedWriter, b *bytes.Buffer) string {
		l.mu.Lock()
		defer l.mu.Unlock()
		return b.String()
	}
	if err := chat.Start(); err != nil {
		t.Fatal(err)
	}
	chatDone := make(chan error, 1)
	go func() { chatDone <- chat.Wait() }()
	t.Cleanup(func() {
		_ = chat.Process.Kill()
		<-chatDone
	})
	if err := model.WaitRequests(ctx, 2); err != nil {
		t.Fatalf("the slow turn did not call the model: %v\n%s", err, read(errW, &chatErr))
	}

	db := filepath.Join(u.home, "talaria.db")
	if err := os.Remove(db); err != nil {
		t.Fatal(err)
	}
	var serveErr error
	select {
	case serveErr = <-srv.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve still runs 30s after its store was removed:\n%s", srv.stderr.String())
	}
	if serveErr == nil {
		t.Errorf("serve exited with status 0 after its store was removed")
	}
	want := "talaria serve: the store " + db + " was removed or replaced under a running serve; stopping: restart serve to continue\n"
	if !strings.Contains(srv.stderr.String(), want) {
		t.Errorf("serve stderr lacks %q:\n%s", want, srv.stderr.String())
	}
	if strings.Contains(srv.stderr.String(), "panic") || strings.Contains(srv.stderr.String(), "goroutine ") {
		t.Errorf("serve stderr holds a panic:\n%s", srv.stderr.String())
	}

	// The slow answer comes after serve is gone; give the client time to
	// report anything it would.
	select {
	case <-chatDone:
		chatDone <- nil // for the cleanup
	case <-time.After(10 * time.Second):
	}
	out := read(outW, &chatOut)
	if strings.Contains(out, `"completed": true`) || strings.Contains(out, "late answer") {
		t.Errorf("the turn was reported completed after its store was removed:\n%s\n%s", out, read(errW, &chatErr))
	}
	t.Logf("serve said:\n%s\nthe client said:\n%s%s", srv.stderr.String(), out, read(errW, &chatErr))
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the removed store was created again: stat = %v", err)
	}
}
