package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/pgtest"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

func TestStoreWatchNext(t *testing.T) {
	t.Parallel()
	gone := fmt.Errorf("%w: /h/talaria.db was removed", models.ErrStoreGone)
	down := fmt.Errorf("%w: dial tcp 127.0.0.1:5432: connect: connection refused", models.ErrUnreachable)
	tests := []struct {
		name    string
		prev    storeWatch
		err     error
		want    storeWatch
		wantMsg string
	}{
		{"ok stays ok", storeWatch{}, nil, storeWatch{}, ""},
		{"one miss is a blip", storeWatch{}, down, storeWatch{misses: 1}, ""},
		{"two misses are a blip", storeWatch{misses: 1}, down, storeWatch{misses: 2}, ""},
		{"a blip passes", storeWatch{misses: 2}, nil, storeWatch{}, ""},
		{"three misses in a row pause", storeWatch{misses: 2}, down, storeWatch{storeUnreachable, 3},
			"the store does not answer: serve stops taking work until it does (dial tcp 127.0.0.1:5432: connect: connection refused)"},
		{"unreachable stays, said once", storeWatch{storeUnreachable, 3}, down, storeWatch{storeUnreachable, 4}, ""},
		{"unreachable recovers", storeWatch{storeUnreachable, 5}, nil, storeWatch{}, "the store answers again: serve takes work again"},
		{"ok to gone at once", storeWatch{}, gone, storeWatch{health: storeGone}, "was removed"},
		{"unreachable to gone", storeWatch{storeUnreachable, 3}, gone, storeWatch{health: storeGone}, "was removed"},
		{"any other error is unreachable", storeWatch{misses: 2}, errors.New("boom"), storeWatch{storeUnreachable, 3},
			"the store does not answer: serve stops taking work until it does (boom)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := tt.prev.next(tt.err)
			if got != tt.want {
				t.Errorf("state = %+v, want %+v", got, tt.want)
			}
			if (tt.wantMsg == "") != (msg == "") || !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("message = %q, want one containing %q", msg, tt.wantMsg)
			}
		})
	}
}

func TestUnreachableDetailIsOneShortLine(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("%w: %s", models.ErrUnreachable, strings.Repeat("line\n\t", 100))
	d := unreachableDetail(err)
	if strings.ContainsAny(d, "\n\t") || len(d) > 204 || strings.HasPrefix(d, "the store") {
		t.Errorf("detail = %q", d)
	}
}

// TestWatchStoreNoticesRemovedFile: the watcher of a Runtime on a real
// SQLite file returns a StoreGoneError naming the file soon after the file
// is removed, and stays quiet before.
func TestWatchStoreNoticesRemovedFile(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"remove", "replace"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "talaria.db")
			st, err := models.Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var logs bytes.Buffer
			rt := &Runtime{Store: st, logger: slog.New(slog.NewTextHandler(&logs, nil))}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- rt.WatchStore(ctx, 50*time.Millisecond, nil) }()

			time.Sleep(200 * time.Millisecond) // room for an early return to show
			select {
			case err := <-done:
				t.Fatalf("WatchStore returned %v before anything happened", err)
			default:
			}
			switch how {
			case "remove":
				err = os.Remove(path)
			case "replace":
				other := filepath.Join(dir, "other")
				if err = os.WriteFile(other, nil, 0o600); err == nil {
					err = os.Rename(other, path)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			err = <-done
			var gone *StoreGoneError
			if !errors.As(err, &gone) || !errors.Is(err, models.ErrStoreGone) {
				t.Fatalf("WatchStore = %v, want a StoreGoneError", err)
			}
			want := "the store " + path + " was removed or replaced under a running serve; stopping: restart serve to continue"
			if err.Error() != want {
				t.Errorf("message = %q, want %q", err.Error(), want)
			}
			if logs.Len() != 0 {
				t.Errorf("logged before the store went: %s", logs.String())
			}
		})
	}
}

// TestWatchStoreQuietWhileHealthy: ending ctx ends the watch with nil.
func TestWatchStoreQuietWhileHealthy(t *testing.T) {
	t.Parallel()
	st, err := models.Open(t.Context(), filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var logs bytes.Buffer
	rt := &Runtime{Store: st, logger: slog.New(slog.NewTextHandler(&logs, nil))}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := rt.WatchStore(ctx, 20*time.Millisecond, nil); err != nil {
		t.Errorf("WatchStore = %v, want nil when ctx ends", err)
	}
	if logs.Len() != 0 {
		t.Errorf("logged about a healthy store: %s", logs.String())
	}
}

// TestWatchStoreSaysWhenDatabaseAway: a PostgreSQL store that stops
// answering is said once, not stopped for; when it answers again that is
// said too.
func TestWatchStoreSaysWhenDatabaseAway(t *testing.T) {
	t.Parallel()
	proxied, proxy := pgtest.Proxied(t, pgtest.DSN(t, "watch"))
	st, err := models.Open(t.Context(), proxied)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	logs := &lockedBuffer{}
	rt := &Runtime{Store: st, logger: slog.New(slog.NewTextHandler(logs, nil))}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- rt.WatchStore(ctx, 50*time.Millisecond, nil) }()

	waitFor := func(what string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(logs.String(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q logged; logs:\n%s", what, logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	proxy.Down()
	waitFor("the store does not answer")
	time.Sleep(300 * time.Millisecond) // room for a second notice to show
	if n := strings.Count(logs.String(), "does not answer"); n != 1 {
		t.Errorf("said %d times that the store does not answer, want once:\n%s", n, logs.String())
	}
	select {
	case err := <-done:
		t.Fatalf("WatchStore returned %v while the database was away: it must wait", err)
	default:
	}
	proxy.Up()
	waitFor("the store answers again")
	if _, err := st.NextTurn(t.Context(), "s", "m", ""); err != nil {
		t.Errorf("the store does not work again: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("WatchStore = %v after ctx ended", err)
	}
}

// lockedBuffer is a bytes.Buffer safe for a logger and a reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proxiedPostgres is a PostgreSQL DSN for this test reached through a proxy
// that can drop the database, with a short connect timeout.
func proxiedPostgres(t *testing.T, prefix string) (string, *pgtest.Proxy) {
	t.Helper()
	return pgtest.Proxied(t, pgtest.DSN(t, prefix))
}

// TestStoreOutagePausesWork: a serving runtime on PostgreSQL whose database
// stops answering pauses work (says so once), starts no activity of a turn
// sent meanwhile (the model is not called), and when the database answers
// again resumes (says so) and the turn completes.
func TestStoreOutagePausesWork(t *testing.T) {
	t.Parallel()
	dsn, proxy := proxiedPostgres(t, "pause")
	model := fakellm.New(fakellm.TextStep("done after the outage"))
	defer model.Close()
	rt := startRuntime(t, model, func(c *config.Config, _ *Options) { c.DB = dsn })
	lines := make(chan string, 10)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	watchCtx, stopWatch := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rt.WatchStore(watchCtx, 100*time.Millisecond, func(l string) { lines <- l }) }()
	defer func() {
		stopWatch()
		if err := <-done; err != nil {
			t.Errorf("WatchStore = %v", err)
		}
	}()
	said := func(want string) {
		t.Helper()
		select {
		case l := <-lines:
			if !strings.HasPrefix(l, want) {
				t.Fatalf("said %q, want %q", l, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("nothing said within 30s, want %q", want)
		}
	}

	proxy.Down()
	said("the store does not answer: serve stops taking work until it does (")
	if !rt.WorkPaused() {
		t.Fatal("work is not paused while the store does not answer")
	}

	// A turn sent now (Temporal answers; the store does not) waits.
	msg := workflows.Message{RequestID: NewRequestID(), Text: "hello", Mode: workflows.BusyQueue,
		Turn: workflows.TurnInput{SessionID: "outage", UserMessage: "hello", Model: fakellm.DefaultModel, Workdir: t.TempDir()}}
	if err := rt.send(ctx, "outage", msg); err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		res workflows.ConversationResult
		err error
	}
	result := make(chan outcome, 1)
	go func() {
		id, err := rt.waitAssigned(ctx, "outage", msg.RequestID)
		if err != nil {
			result <- outcome{err: err}
			return
		}
		res, err := rt.WaitTurn(ctx, id)
		result <- outcome{res, err}
	}()
	time.Sleep(3 * time.Second) // room for a call during the outage to show
	if n := len(model.Requests()); n != 0 {
		t.Fatalf("the model was called %d times while work was paused", n)
	}
	select {
	case l := <-lines:
		t.Fatalf("said more during the outage: %q", l)
	case o := <-result:
		t.Fatalf("the turn ended during the outage: %+v, %v", o.res, o.err)
	default:
	}

	proxy.Up()
	said("the store answers again: serve takes work again")
	if rt.WorkPaused() {
		t.Fatal("work did not resume when the store answered")
	}
	select {
	case o := <-result:
		if o.err != nil {
			t.Fatalf("turn: %v", o.err)
		}
		if !o.res.Completed || o.res.FinalResponse == nil || *o.res.FinalResponse != "done after the outage" {
			t.Fatalf("turn sent during the outage: %+v", o.res)
		}
	case <-ctx.Done():
		t.Fatal("the turn sent during the outage did not complete after it")
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("the model was called %d times, want once", n)
	}
}
