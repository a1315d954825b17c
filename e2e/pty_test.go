package e2e

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// terminal is talaria running in a real pseudo-terminal, as a person sees it.
type terminal struct {
	t    testing.TB
	tty  io.ReadWriteCloser
	mu   sync.Mutex
	seen bytes.Buffer
	done chan struct{}
}

func (u *user) terminal(ctx context.Context, args ...string) *terminal {
	u.t.Helper()
	cmd := u.command(ctx, args...)
	cmd.Env = append(cmd.Env, "TERM=xterm")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		u.t.Fatal(err)
	}
	term := &terminal{t: u.t, tty: f, done: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			term.mu.Lock()
			term.seen.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(term.done) }()
	u.t.Cleanup(func() { f.Close() })
	return term
}

func (term *terminal) screen() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.seen.String()
}

func (term *terminal) type_(s string) {
	term.t.Helper()
	if _, err := term.tty.Write([]byte(s)); err != nil {
		term.t.Fatal(err)
	}
}

// waitScreen waits until the screen shows text, and returns the screen.
func (term *terminal) waitScreen(text string, d time.Duration) string {
	term.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := term.screen()
		if strings.Contains(s, text) {
			return s
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("the screen never showed %q; it shows:\n%s", text, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestInteractiveChatInTerminal: in a real terminal, the chat streams the
// reply word by word, shows a progress line per tool, and Ctrl-C interrupts
// a turn without ending the chat.
func TestInteractiveChatInTerminal(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{Name: "terminal", Arguments: `{"command":"echo from-the-tool"}`}),
		fakellm.Step{Text: "Streaming words arrive one at a time here", ChunkDelay: 300 * time.Millisecond},
		fakellm.Step{Text: "Slowly, this answer takes far too long", StallAfterChunks: 1},
		fakellm.ToolStep(fakellm.ToolCall{Name: "terminal", Arguments: `{"command":"rm -r junk && echo junk-removed"}`}),
		fakellm.TextStep("Still here and listening."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	term := u.terminal(ctx, "chat", "--session", "tty")
	start := time.Now()
	mark := func(what string) { t.Logf("%6.2fs %s", time.Since(start).Seconds(), what) }
	term.waitScreen("> ", time.Minute)
	mark("prompt")

	term.type_("run the tool then explain\r")
	term.waitScreen("⚙ terminal", time.Minute)
	term.waitScreen("✓ terminal", time.Minute)
	s := term.waitScreen("Streaming words", time.Minute)
	if strings.Contains(s, "one at a time here") {
		t.Fatal("the whole reply appeared at once: it was not streamed")
	}
	term.waitScreen("one at a time here", time.Minute)
	mark("streamed")

	term.type_("now something slow\r")
	term.waitScreen("Slowly", time.Minute)
	term.type_("\x03") // Ctrl-C
	term.waitScreen("interrupting the turn", 10*time.Second)
	term.waitScreen("turn ended: interrupted", 10*time.Second)
	mark("interrupted")

	// A dangerous command is asked about inline, and runs once approved.
	if err := os.MkdirAll(filepath.Join(u.workdir, "junk"), 0o755); err != nil {
		t.Fatal(err)
	}
	term.type_("clean up and tell me you are still there\r")
	term.waitScreen("approve? [o]nce", time.Minute)
	if _, err := os.Stat(filepath.Join(u.workdir, "junk")); err != nil {
		t.Fatal("the command ran before it was approved")
	}
	term.type_("o\r")
	term.waitScreen("Still here and listening.", time.Minute)
	if _, err := os.Stat(filepath.Join(u.workdir, "junk")); !os.IsNotExist(err) {
		t.Fatal("the approved command did not run")
	}
	mark("third answer")
	select {
	case <-term.done:
		t.Fatal("the chat exited")
	default:
	}
	term.type_("\x04") // Ctrl-D ends the chat
	select {
	case <-term.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the chat did not exit on Ctrl-D")
	}
}
