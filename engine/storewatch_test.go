package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/pgtest"
	"github.com/talaria-agent/talaria/models"
)

func TestStoreTransition(t *testing.T) {
	gone := fmt.Errorf("%w: /h/talaria.db was removed", models.ErrStoreGone)
	down := fmt.Errorf("%w: connection refused", models.ErrUnreachable)
	tests := []struct {
		name    string
		prev    storeHealth
		err     error
		want    storeHealth
		wantMsg string
	}{
		{"ok stays ok", storeOK, nil, storeOK, ""},
		{"ok to unreachable", storeOK, down, storeUnreachable, "the store does not answer"},
		{"unreachable stays, said once", storeUnreachable, down, storeUnreachable, ""},
		{"unreachable recovers", storeUnreachable, nil, storeOK, "the store answers again"},
		{"ok to gone", storeOK, gone, storeGone, "was removed"},
		{"unreachable to gone", storeUnreachable, gone, storeGone, "was removed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := storeTransition(tt.prev, tt.err)
			if got != tt.want {
				t.Errorf("health = %v, want %v", got, tt.want)
			}
			if (tt.wantMsg == "") != (msg == "") || !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("message = %q, want one containing %q", msg, tt.wantMsg)
			}
		})
	}
}

// TestWatchStoreNoticesRemovedFile: the watcher of a Runtime on a real
// SQLite file returns a StoreGoneError naming the file soon after the file
// is removed, and stays quiet before.
func TestWatchStoreNoticesRemovedFile(t *testing.T) {
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
			go func() { done <- rt.WatchStore(ctx, 50*time.Millisecond) }()

			time.Sleep(200 * time.Millisecond)
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
	st, err := models.Open(t.Context(), filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var logs bytes.Buffer
	rt := &Runtime{Store: st, logger: slog.New(slog.NewTextHandler(&logs, nil))}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := rt.WatchStore(ctx, 20*time.Millisecond); err != nil {
		t.Errorf("WatchStore = %v, want nil when ctx ends", err)
	}
	if logs.Len() != 0 {
		t.Errorf("logged about a healthy store: %s", logs.String())
	}
}

// tcpProxy forwards connections to a database server and can drop them
// all and refuse new ones, as a server that goes away does.
type tcpProxy struct {
	t      *testing.T
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func startProxy(t *testing.T, target string) *tcpProxy {
	p := &tcpProxy{t: t, target: target}
	p.up("127.0.0.1:0")
	t.Cleanup(p.down)
	return p
}

func (p *tcpProxy) up(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
}

func (p *tcpProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestWatchStoreSaysWhenDatabaseAway: a PostgreSQL store that stops
// answering is said once, not stopped for; when it answers again that is
// said too.
func TestWatchStoreSaysWhenDatabaseAway(t *testing.T) {
	dsn := pgtest.DSN(t, "watch")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startProxy(t, u.Host)
	u.Host = proxy.addr
	q := u.Query()
	q.Set("connect_timeout", "1")
	u.RawQuery = q.Encode()
	st, err := models.Open(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	logs := &lockedBuffer{}
	rt := &Runtime{Store: st, logger: slog.New(slog.NewTextHandler(logs, nil))}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- rt.WatchStore(ctx, 50*time.Millisecond) }()

	waitFor := func(what string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(logs.String(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q logged; logs:\n%s", what, logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	proxy.down()
	waitFor("the store does not answer")
	time.Sleep(300 * time.Millisecond)
	if n := strings.Count(logs.String(), "does not answer"); n != 1 {
		t.Errorf("said %d times that the store does not answer, want once:\n%s", n, logs.String())
	}
	select {
	case err := <-done:
		t.Fatalf("WatchStore returned %v while the database was away: it must wait", err)
	default:
	}
	proxy.up(proxy.addr)
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
