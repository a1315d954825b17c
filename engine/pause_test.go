package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

func TestGateBeatEvery(t *testing.T) {
	tests := []struct {
		hb, want time.Duration
	}{
		{0, 50 * time.Millisecond},
		{30 * time.Millisecond, 50 * time.Millisecond},
		{time.Second, time.Second / 3},
		{10 * time.Second, time.Second},
		{time.Hour, time.Second},
	}
	for _, tt := range tests {
		if got := gateBeatEvery(tt.hb); got != tt.want {
			t.Errorf("gateBeatEvery(%v) = %v, want %v", tt.hb, got, tt.want)
		}
	}
}

// TestWorkGate: an open gate lets a start through at once; a paused one
// holds it, beating, until resume or until its context ends; pause and
// resume say whether they changed anything.
func TestWorkGate(t *testing.T) {
	var g workGate
	if g.paused() || g.resume() {
		t.Fatal("a new gate is not open")
	}
	g.wait(t.Context(), time.Millisecond, func() { t.Error("an open gate beat") })

	if !g.pause() || g.pause() || !g.paused() {
		t.Fatal("pause: want true once, then false, and paused")
	}
	var beats atomic.Int32
	passed := make(chan struct{})
	go func() {
		g.wait(context.Background(), 10*time.Millisecond, func() { beats.Add(1) })
		close(passed)
	}()
	time.Sleep(100 * time.Millisecond)
	select {
	case <-passed:
		t.Fatal("a paused gate let a start through")
	default:
	}
	if beats.Load() == 0 {
		t.Error("no heartbeat while waiting at the gate")
	}
	if !g.resume() || g.resume() || g.paused() {
		t.Fatal("resume: want true once, then false, and open")
	}
	<-passed

	g.pause()
	ctx, cancel := context.WithCancel(t.Context())
	ended := make(chan struct{})
	go func() { g.wait(ctx, time.Second, nil); close(ended) }()
	cancel()
	<-ended
	if !g.paused() {
		t.Error("a start whose context ended resumed the gate")
	}
}

// TestStoreOutageLetsRunningWorkFinish: a tool batch (a terminal command)
// running when the PostgreSQL store stops answering goes on through the
// pause and finishes after the store is back with its own result (not
// interrupted, no "outcome unknown"); a turn sent during the pause starts
// nothing (the model is not called) until work resumes, then completes.
func TestStoreOutageLetsRunningWorkFinish(t *testing.T) {
	dsn, proxy := proxiedPostgres(t, "pauserun")
	dir := t.TempDir()
	started, release := filepath.Join(dir, "started"), filepath.Join(dir, "release")
	command := fmt.Sprintf(`touch %q; i=0; while [ ! -e %q ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; echo finished after $i`,
		started, release)
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		switch {
		case last.Role == openai.ChatMessageRoleTool:
			return fakellm.TextStep("built")
		case last.Content == "build":
			args := fmt.Sprintf(`{"command":%q}`, command)
			return fakellm.ToolStep(fakellm.ToolCall{ID: "b1", Name: "terminal", Arguments: args})
		}
		return fakellm.TextStep("later done")
	}))
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
	type outcome struct {
		res workflows.ConversationResult
		err error
	}
	startTurn := func(session, text string) <-chan outcome {
		t.Helper()
		msg := workflows.Message{RequestID: newRequestID(), Text: text, Mode: workflows.BusyQueue,
			Turn: workflows.TurnInput{SessionID: session, UserMessage: text, Model: fakellm.DefaultModel, Workdir: dir}}
		if err := rt.send(ctx, session, msg); err != nil {
			t.Fatal(err)
		}
		result := make(chan outcome, 1)
		go func() {
			id, err := rt.waitAssigned(ctx, session, msg.RequestID)
			if err != nil {
				result <- outcome{err: err}
				return
			}
			res, err := rt.WaitTurn(ctx, id)
			result <- outcome{res, err}
		}()
		return result
	}

	build := startTurn("build", "build")
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the command never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	proxy.down()
	said("the store does not answer: serve stops taking work until it does (")
	if !rt.WorkPaused() {
		t.Fatal("work is not paused while the store does not answer")
	}
	later := startTurn("later", "later")
	time.Sleep(3 * time.Second)
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("the model was called %d times by the end of the outage, want once (the build's first call)", n)
	}
	select {
	case o := <-build:
		t.Fatalf("the build turn ended during the outage: %+v, %v", o.res, o.err)
	case o := <-later:
		t.Fatalf("the turn sent during the outage ended during it: %+v, %v", o.res, o.err)
	default:
	}

	proxy.up(proxy.addr)
	said("the store answers again: serve takes work again")
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]<-chan outcome{"build": build, "later": later} {
		select {
		case o := <-ch:
			want := map[string]string{"build": "built", "later": "later done"}[name]
			if o.err != nil || !o.res.Completed || o.res.FinalResponse == nil || *o.res.FinalResponse != want {
				t.Fatalf("%s turn: %+v, %v", name, o.res, o.err)
			}
		case <-ctx.Done():
			t.Fatalf("the %s turn did not complete after the outage", name)
		}
	}
	var toolResult string
	for _, r := range model.Requests() {
		if last, ok := r.LastMessage(); ok && last.Role == openai.ChatMessageRoleTool {
			toolResult = last.Content
		}
	}
	if !strings.Contains(toolResult, "finished after") || strings.Contains(toolResult, activities.OutcomeUnknown[:15]) ||
		strings.Contains(toolResult, "interrupted") {
		t.Errorf("the command running through the outage was answered %q, want its own output", toolResult)
	}
	if n := len(model.Requests()); n != 3 {
		t.Errorf("the model was called %d times, want 3", n)
	}
}
