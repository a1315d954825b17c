package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestTries: failed takes are counted per update until forgotten, and only
// the latest maxTracked updates are.
func TestTries(t *testing.T) {
	t.Parallel()
	var tr tries
	for want := 1; want <= 3; want++ {
		if got := tr.failed("a"); got != want {
			t.Fatalf("failed(a) = %d, want %d", got, want)
		}
	}
	tr.forget("a")
	tr.forget("never")
	if got := tr.failed("a"); got != 1 {
		t.Fatalf("after forget, failed(a) = %d, want 1", got)
	}
	for i := range maxTracked {
		tr.failed(fmt.Sprint(i))
	}
	if got := tr.failed("a"); got != 1 {
		t.Fatalf("the oldest is forgotten first: failed(a) = %d, want 1", got)
	}
	if len(tr.count) != maxTracked || len(tr.order) != maxTracked {
		t.Fatalf("%d counts, %d in order, want %d", len(tr.count), len(tr.order), maxTracked)
	}
}

// TestSetAsideDue: an update whose take panicked is set aside at the
// setAsideAfter-th panic, when the store and Temporal answer; they are
// asked only then.
func TestSetAsideDue(t *testing.T) {
	t.Parallel()
	down := errors.New("the store does not answer")
	for _, c := range []struct {
		panics    int
		answering error
		want      bool
		asked     bool
	}{
		{1, nil, false, false},
		{setAsideAfter - 1, nil, false, false},
		{setAsideAfter, nil, true, true},
		{setAsideAfter, down, false, true},
		{setAsideAfter + 3, nil, true, true},
		{setAsideAfter + 3, down, false, true},
	} {
		asked := false
		got := setAsideDue(c.panics, func() error { asked = true; return c.answering })
		if got != c.want || asked != c.asked {
			t.Errorf("%d panics, answering %v: due %v (asked %v), want %v (asked %v)", c.panics, c.answering, got, asked, c.want, c.asked)
		}
	}
}

// TestGuard: a panic becomes an error wrapping ErrPanicked (its stack
// logged); an error or nil passes through.
func TestGuard(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	logger := slog.New(slog.NewTextHandler(&log, nil))
	if err := guard(logger, "take", func() error { panic("nil map") }, "update", "7"); !errors.Is(err, ErrPanicked) || !strings.Contains(err.Error(), "nil map") {
		t.Fatalf("a panic: %v", err)
	}
	if !strings.Contains(log.String(), "update=7") || !strings.Contains(log.String(), "setaside_test.go") {
		t.Fatalf("the log has no update or stack: %s", log.String())
	}
	boom := errors.New("boom")
	if err := guard(logger, "take", func() error { return boom }); err != boom {
		t.Fatalf("an error: %v", err)
	}
	if err := guard(logger, "take", func() error { return nil }); err != nil {
		t.Fatalf("nil: %v", err)
	}
}

// TestUpdateThatAlwaysFailsIsSetAside: a real engine and a gateway on an
// in-memory platform that acknowledges cumulatively (as Telegram does). An
// update whose take panics every time (its file's download does) neither
// brings the process down nor holds the chats up for ever: once it failed
// setAsideAfter times while the store and Temporal answered, it is set
// aside, its sender told once, and acknowledged; the chat's next message
// and another chat's are handed over and acknowledged after it.
func TestUpdateThatAlwaysFailsIsSetAside(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		return fakellm.TextStep("read: " + last.Content)
	}))
	defer model.Close()
	cfg, rt := StartEngine(t, ctx, model.URL())
	logger := slog.New(slog.DiscardHandler)
	p := newFakePlatform(false)
	g, err := New(Options{Runtime: rt, Config: cfg, Platforms: []Platform{p},
		Access: map[string]*Access{"fake": {Users: []string{"5", "6"}}}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	gctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); g.Run(gctx) }()
	defer func() { stop(); <-done }()

	var fetches atomic.Int32
	poison := Update{ID: "1", Chat: Chat{ID: "A"}, User: "5", MessageID: "m1", Text: "see the file",
		Files: []File{{Name: "notes.txt", Fetch: func(context.Context, int64) ([]byte, error) {
			fetches.Add(1)
			var files []string
			return nil, errors.New(files[len(files)]) // a fault: an index out of range
		}}}}
	p.push(poison, Update{ID: "2", Chat: Chat{ID: "A"}, User: "5", Text: "after the file"},
		Update{ID: "3", Chat: Chat{ID: "B"}, User: "6", Text: "hello from six"})

	waitFor(t, "every update acknowledged", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.pending) == 0
	})
	p.mu.Lock()
	sent := slices.Clone(p.sent)
	p.mu.Unlock()
	notices := slices.DeleteFunc(sent, func(s string) bool { return !strings.Contains(s, "set aside") })
	if len(notices) != 1 || !strings.HasPrefix(notices[0], "A: ") || !strings.Contains(notices[0], "update 1") {
		t.Fatalf("notices sent: %q, want one to chat A naming update 1", notices)
	}
	if n := fetches.Load(); n != setAsideAfter {
		t.Fatalf("the file was fetched %d times, want %d", n, setAsideAfter)
	}
	// Delivered again (a restart before its acknowledgment), it is known
	// as set aside: acknowledged at once, not taken, its sender not told
	// again.
	p.push(poison)
	waitFor(t, "the update delivered again acknowledged", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.pending) == 0
	})
	p.mu.Lock()
	told := len(slices.DeleteFunc(slices.Clone(p.sent), func(s string) bool { return !strings.Contains(s, "set aside") }))
	p.mu.Unlock()
	if n := fetches.Load(); n != setAsideAfter || told != 1 {
		t.Fatalf("delivered again: fetched %d times, told %d times; want %d and 1", n, told, setAsideAfter)
	}
	for _, text := range []string{"after the file", "hello from six"} {
		waitFor(t, text+" reached the model", func() bool {
			return slices.ContainsFunc(model.Requests(), func(r fakellm.Request) bool {
				last, ok := r.LastMessage()
				return ok && strings.Contains(last.Content, text)
			})
		})
	}
	if slices.ContainsFunc(model.Requests(), func(r fakellm.Request) bool {
		last, _ := r.LastMessage()
		return strings.Contains(last.Content, "see the file")
	}) {
		t.Fatal("the update set aside reached the model")
	}
}
