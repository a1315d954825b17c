package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/pgtest"
	"github.com/talaria-agent/talaria/models"
)

// TestDaemonsStopWhenStoreRemoved: a `talaria worker` and a `talaria
// scheduler` of a multi-process deployment on a shared SQLite store watch
// it as serve does: removing the file stops each with one clear line that
// names it, and exit status 1; neither creates the store again.
func TestDaemonsStopWhenStoreRemoved(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("several processes")
	}
	model := fakellm.New()
	defer model.Close()
	temporalHost := newUser(t, model.URL())
	port := freePort(t)
	temporalHost.daemon("talaria temporal: ready", "temporal", "--temporal-port", fmt.Sprint(port), "--ui-port", "0")
	cred := engine.CredentialPath(temporalHost.home)
	db := filepath.Join(t.TempDir(), "shared.db")
	shared := map[string]string{"TEMPORAL_ADDRESS": fmt.Sprintf("127.0.0.1:%d", port), "TALARIA_DB": db,
		"TEMPORAL_TLS_CERT": cred, "TEMPORAL_TLS_KEY": cred, "TEMPORAL_TLS_CA": cred, "TEMPORAL_TLS_SERVER_NAME": "localhost"}
	daemons := map[string]*server{}
	for _, name := range []string{"worker", "scheduler"} {
		u := newUser(t, model.URL())
		for k, v := range shared {
			u.env[k] = v
		}
		daemons[name] = u.daemon("talaria "+name+": ready", name)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("the daemons did not open the store: %v", err)
	}
	if err := os.Remove(db); err != nil {
		t.Fatal(err)
	}
	for name, d := range daemons {
		var err error
		select {
		case err = <-d.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("talaria %s still runs 30s after its store was removed:\n%s", name, d.stderr.String())
		}
		stderr := d.stderr.String()
		if code := d.cmd.ProcessState.ExitCode(); code != 1 {
			t.Errorf("talaria %s exited with %v (status %d), want status 1", name, err, code)
		}
		want := fmt.Sprintf("talaria %s: the store %s was removed or replaced under a running talaria %s; stopping: restart talaria %s to continue\n",
			name, db, name, name)
		if !strings.Contains(stderr, want) {
			t.Errorf("talaria %s stderr lacks %q:\n%s", name, want, stderr)
		}
		if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "shutting down") {
			t.Errorf("talaria %s stderr:\n%s", name, stderr)
		}
		t.Logf("talaria %s said:\n%s", name, stderr)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the removed store was created again: stat = %v", err)
	}
}

// TestChatFailsWhenStoreRemoved: `talaria chat` without serve (its own
// worker, no store watcher) whose SQLite store is removed while the model
// answers ends with a failure, one line saying the store was removed,
// instead of retrying its bookkeeping for ever; it never says completed.
func TestChatFailsWhenStoreRemoved(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.Step{Text: "late answer", Delay: 3 * time.Second})
	defer model.Close()
	u := newUser(t, model.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	chat := u.command(ctx, "chat", "--json", "--session", "gone", "-q", "hello")
	var out, errOut bytes.Buffer
	chat.Stdout, chat.Stderr = &lockedWriter{w: &out}, &lockedWriter{w: &errOut}
	if err := chat.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- chat.Wait() }()
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatalf("the turn did not call the model: %v", err)
	}
	db := filepath.Join(u.home, "talaria.db")
	if err := os.Remove(db); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		_ = chat.Process.Kill()
		<-done
		t.Fatalf("chat still runs 90s after its store was removed:\nstdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
	code := chat.ProcessState.ExitCode()
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	if code == 0 {
		t.Errorf("chat exited 0 after its store was removed")
	}
	all := out.String() + errOut.String()
	if strings.Contains(all, `"completed": true`) || strings.Contains(all, "late answer") {
		t.Errorf("the turn was reported completed after its store was removed")
	}
	if !strings.Contains(all, "removed") {
		t.Errorf("nothing says the store was removed")
	}
	if strings.Contains(all, "panic") || strings.Contains(all, "goroutine ") {
		t.Errorf("a panic was shown")
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the removed store was created again: stat = %v", err)
	}
}

// TestDaemonsPauseWhileDatabaseAway: a `talaria worker` and a `talaria
// scheduler` on PostgreSQL whose database goes away say once, naming
// themselves, that they stop taking work; a turn sent meanwhile is not
// run (the model is not called) until the database answers again, which
// they say too, and then it completes.
func TestDaemonsPauseWhileDatabaseAway(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a database outage")
	}
	direct := pgtest.DSN(t, "daemonoutage")
	proxied, proxy := pgtest.Proxied(t, direct)

	model := fakellm.New(fakellm.TextStep("run after the outage"))
	defer model.Close()
	temporalHost := newUser(t, model.URL())
	port := freePort(t)
	temporalHost.daemon("talaria temporal: ready", "temporal", "--temporal-port", fmt.Sprint(port), "--ui-port", "0")
	cred := engine.CredentialPath(temporalHost.home)
	shared := map[string]string{"TEMPORAL_ADDRESS": fmt.Sprintf("127.0.0.1:%d", port),
		"TEMPORAL_TLS_CERT": cred, "TEMPORAL_TLS_KEY": cred, "TEMPORAL_TLS_CA": cred, "TEMPORAL_TLS_SERVER_NAME": "localhost"}
	daemons := map[string]*server{}
	for _, name := range []string{"worker", "scheduler"} {
		u := newUser(t, model.URL())
		for k, v := range shared {
			u.env[k] = v
		}
		u.env["TALARIA_DB"] = proxied
		daemons[name] = u.daemon("talaria "+name+": ready", name)
	}
	said := func(d *server) string {
		w := d.cmd.Stderr.(*lockedWriter)
		w.mu.Lock()
		defer w.mu.Unlock()
		return d.stderr.String()
	}

	proxy.Down()
	for name, d := range daemons {
		paused := fmt.Sprintf("talaria %s: the store does not answer: talaria %s stops taking work until it does (", name, name)
		waitFor(t, 30*time.Second, func() bool { return strings.Contains(said(d), paused) })
	}
	sender := newUser(t, model.URL())
	for k, v := range shared {
		sender.env[k] = v
	}
	sender.env["TALARIA_DB"] = direct
	if out, stderr, code := sender.run(time.Minute, "send", "outage", "hello", "--mode", "queue"); code != 0 {
		t.Fatalf("send: exit %d %s%s", code, out, stderr)
	}
	time.Sleep(5 * time.Second)
	if n := len(model.Requests()); n != 0 {
		t.Fatalf("the model was called %d times while the database was away, want none", n)
	}

	proxy.Up()
	for name, d := range daemons {
		resumed := fmt.Sprintf("talaria %s: the store answers again: talaria %s takes work again\n", name, name)
		waitFor(t, 30*time.Second, func() bool { return strings.Contains(said(d), resumed) })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	store, err := models.Open(ctx, direct)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	waitFor(t, 90*time.Second, func() bool {
		turns, err := store.Turns(ctx, "outage")
		return err == nil && len(turns) == 1 && turns[0].Status == "completed"
	})
	for name, d := range daemons {
		s := said(d)
		if strings.Contains(s, "panic") || strings.Contains(s, "goroutine ") || strings.Contains(s, "serve") {
			t.Errorf("talaria %s said:\n%s", name, s)
		}
		t.Logf("talaria %s said:\n%s", name, s)
	}
}
