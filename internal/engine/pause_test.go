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
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/workflows"
)

func TestGateBeatEvery(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	for giveUp := time.Now().Add(time.Minute); beats.Load() < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(giveUp) {
			t.Fatalf("%d heartbeats in a minute while waiting at the gate, want 3", beats.Load())
		}
	}
	select {
	case <-passed:
		t.Fatal("a paused gate let a start through")
	default:
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
	t.Parallel()
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
	startTurn := func(session, text string) <-chan turnOutcome { return sendTurn(ctx, t, rt, session, text, dir) }

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
	proxy.Down()
	said("the store does not answer: serve stops taking work until it does (")
	if !rt.WorkPaused() {
		t.Fatal("work is not paused while the store does not answer")
	}
	later := startTurn("later", "later")
	time.Sleep(3 * time.Second) // room for a call or an end during the outage to show
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

	proxy.Up()
	said("the store answers again: serve takes work again")
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]<-chan turnOutcome{"build": build, "later": later} {
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

// turnOutcome is how a turn sent by sendTurn ended.
type turnOutcome struct {
	res workflows.ConversationResult
	err error
}

// sendTurn sends text to session (tools working in dir) and returns where
// its outcome arrives.
func sendTurn(ctx context.Context, t *testing.T, rt *Runtime, session, text, dir string) <-chan turnOutcome {
	t.Helper()
	msg := workflows.Message{RequestID: NewRequestID(), Text: text, Mode: workflows.BusyQueue,
		Turn: workflows.TurnInput{SessionID: session, UserMessage: text, Model: fakellm.DefaultModel, Workdir: dir}}
	if err := rt.send(ctx, session, msg); err != nil {
		t.Fatal(err)
	}
	result := make(chan turnOutcome, 1)
	go func() {
		id, err := rt.waitAssigned(ctx, session, msg.RequestID)
		if err != nil {
			result <- turnOutcome{err: err}
			return
		}
		res, err := rt.WaitTurn(ctx, id)
		result <- turnOutcome{res, err}
	}()
	return result
}

// TestInterruptReachesBatchHeldByPause: a tool batch scheduled while work
// is paused waits at the gate; an interrupt sent then reaches it (the
// waiting activity heartbeats), so when work resumes the commands never
// run, the turn ends interrupted and each call is answered exactly once.
func TestInterruptReachesBatchHeldByPause(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marks := []string{filepath.Join(dir, "ran1"), filepath.Join(dir, "ran2")}
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		if last, _ := req.LastMessage(); last.Role == openai.ChatMessageRoleTool {
			return fakellm.TextStep("after the batch")
		}
		st := fakellm.ToolStep(
			fakellm.ToolCall{ID: "t1", Name: "terminal", Arguments: fmt.Sprintf(`{"command":"touch %s"}`, marks[0])},
			fakellm.ToolCall{ID: "t2", Name: "terminal", Arguments: fmt.Sprintf(`{"command":"touch %s"}`, marks[1])})
		st.Delay = time.Second
		return st
	}))
	defer model.Close()
	rt := startRuntime(t, model)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	const session = "held"
	turn := sendTurn(ctx, t, rt, session, "run both", dir)
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// The model call is running: pausing now leaves it be, and holds the
	// batch it leads to.
	rt.PauseWork()
	st, err := rt.SessionState(ctx, session)
	if err != nil || st.Running == "" {
		t.Fatalf("no running turn: %+v, %v", st, err)
	}
	for !batchScheduled(ctx, t, rt, st.Running) {
		if ctx.Err() != nil {
			t.Fatal("the tool batch was never scheduled")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // room for a held command to start
	if _, err := rt.Interrupt(ctx, session, "stop"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // and for the interrupt to run one
	for _, m := range marks {
		if _, err := os.Stat(m); err == nil {
			t.Fatalf("a command of the batch held by the pause ran before resume: %s", m)
		}
	}
	rt.ResumeWork()
	var o turnOutcome
	select {
	case o = <-turn:
	case <-ctx.Done():
		t.Fatal("the interrupted turn did not end after resume")
	}
	if o.err != nil || !o.res.Interrupted {
		t.Fatalf("turn: %+v, %v; want interrupted", o.res, o.err)
	}
	for _, m := range marks {
		if _, err := os.Stat(m); err == nil {
			t.Errorf("a command of the interrupted batch ran after resume: %s", m)
		}
	}
	msgs, err := rt.Store.Messages(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string]int{}
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleTool {
			answers[m.ToolCallID]++
		}
	}
	if answers["t1"] != 1 || answers["t2"] != 1 || len(answers) != 2 {
		t.Errorf("tool answers by call id = %v, want t1 and t2 once each", answers)
	}
}

// batchScheduled reports whether the turn's history has scheduled a tool
// batch activity.
func batchScheduled(ctx context.Context, t *testing.T, rt *Runtime, turnID string) bool {
	t.Helper()
	iter := rt.Client.GetWorkflowHistory(ctx, turnID, "", false, 0)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == turnapi.ExecuteToolsName {
			return true
		}
	}
	return false
}
