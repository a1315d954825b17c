package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/transcript"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// background runs talaria in the background and returns a function that
// waits for it (stdout, stderr, exit code).
func (u *user) background(ctx context.Context, args ...string) func() (string, string, int) {
	u.t.Helper()
	cmd := u.command(ctx, args...)
	var out bytes.Buffer
	errOut := &lockedWriter{w: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = &out, errOut
	if err := cmd.Start(); err != nil {
		u.t.Fatal(err)
	}
	done := make(chan struct{})
	code := 0
	go func() {
		if err := cmd.Wait(); err != nil {
			code = -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
		}
		close(done)
	}()
	return func() (string, string, int) {
		select {
		case <-done:
		case <-ctx.Done():
			u.t.Fatalf("talaria %v did not finish; stderr:\n%s", args, errOut.w.(*bytes.Buffer).String())
		}
		return out.String(), errOut.w.(*bytes.Buffer).String(), code
	}
}

// TestStopDuringModelCall: `talaria stop` during a model call that streams
// its first words and then never finishes ends the turn interrupted; the
// model sees its request cancelled; no partial assistant message is
// stored. How long the stop takes is BenchmarkStop's to show.
func TestStopDuringModelCall(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.Step{Text: "partial words that never finish", StallAfterChunks: 2})
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	wait := u.background(ctx, "chat", "--json", "-q", "write an essay", "--session", "stopme")
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	u.waitEvent("turn/stopme/1", events.KindDelta) // the first words are streaming
	out, stderr, code := u.run(time.Minute, "stop", "stopme")
	if code != 0 || !strings.Contains(out, "interrupted turn/stopme/1") {
		t.Fatalf("stop: exit %d\n%s%s", code, out, stderr)
	}
	stdout, stderr, code := wait()
	res := decodeResult(t, stdout, stderr)
	if code != 1 || !res.Interrupted || res.TurnExitReason != workflows.StopInterrupted || res.Completed {
		t.Fatalf("exit %d, result %+v", code, res)
	}
	if err := model.WaitFinished(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if !model.Requests()[0].Cancelled {
		t.Fatal("the model request was not cancelled")
	}
	if got := roles(res.Messages); got != "user" {
		t.Fatalf("messages = %s (no partial assistant message may be stored)", got)
	}
	// Nothing runs now: stop says so.
	if _, stderr, code := u.run(time.Minute, "stop", "stopme"); code != 1 || !strings.Contains(stderr, "no running turn") {
		t.Fatalf("second stop: exit %d %s", code, stderr)
	}
}

// TestStopDuringToolBatch: `talaria stop` during a batch of three calls
// kills the running commands and answers every call id exactly once.
func TestStopDuringToolBatch(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.ToolStep(
		fakellm.ToolCall{ID: "c1", Name: "terminal", Arguments: `{"command":"sleep 38.25"}`},
		fakellm.ToolCall{ID: "c2", Name: "terminal", Arguments: `{"command":"sleep 38.5"}`},
		fakellm.ToolCall{ID: "c3", Name: "terminal", Arguments: `{"command":"sleep 38.75"}`},
	))
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	wait := u.background(ctx, "chat", "--json", "-q", "run them", "--session", "batch")
	waitFor(t, 30*time.Second, func() bool { return exec.Command("pgrep", "-f", "sleep 38.5").Run() == nil })
	if _, stderr, code := u.run(time.Minute, "stop", "batch"); code != 0 {
		t.Fatalf("stop: exit %d %s", code, stderr)
	}
	stdout, stderr, code := wait()
	res := decodeResult(t, stdout, stderr)
	if code != 1 || res.TurnExitReason != workflows.StopInterrupted {
		t.Fatalf("exit %d result %+v", code, res)
	}
	if got := roles(res.Messages); got != "user,assistant,tool,tool,tool" {
		t.Fatalf("messages = %s", got)
	}
	assertPaired(t, res.Messages)
	for _, m := range res.Messages[2:] {
		if !strings.Contains(strings.ToLower(m.Content), "cancel") {
			t.Fatalf("result of %s = %q, want a cancellation", m.ToolCallID, m.Content)
		}
	}
	if exec.Command("pgrep", "-f", "sleep 38[.]").Run() == nil { // none of the three
		t.Fatal("a sleep command survived the stop")
	}
}

// TestSteerDuringToolRound: a steer sent while a tool runs reaches the next
// model request exactly once, in the marked block, and the turn continues.
func TestSteerDuringToolRound(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		// The command runs until the test has steered.
		fakellm.ToolStep(fakellm.ToolCall{ID: "t1", Name: "terminal", Arguments: `{"command":"while [ ! -e steered ]; do sleep 0.05; done; echo done"}`}),
		fakellm.TextStep("Switched to python as asked."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	wait := u.background(ctx, "chat", "--json", "-q", "do the task", "--session", "steered")
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, func() bool { return exec.Command("pgrep", "-f", "e steered ]").Run() == nil }) // the tool is running
	if out, stderr, code := u.run(time.Minute, "steer", "steered", "use python instead"); code != 0 {
		t.Fatalf("steer: exit %d %s%s", code, out, stderr)
	}
	// The tool ends once the steer is in the turn (the session's
	// coordinator hands it on; on a busy machine that takes a moment, and
	// a steer that reaches a turn after its last model call runs next).
	u.waitStatus("steered", "steers pending: 1")
	if err := os.WriteFile(filepath.Join(u.workdir, "steered"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := wait()
	res := decodeResult(t, stdout, stderr)
	if code != 0 || !res.Completed {
		t.Fatalf("exit %d result %+v\n%s", code, res, stderr)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	n := 0
	for _, m := range reqs[1].Body.Messages {
		n += strings.Count(m.Content, "use python instead")
	}
	last := reqs[1].Body.Messages[len(reqs[1].Body.Messages)-1]
	if n != 1 || last.Role != "tool" || !strings.Contains(last.Content, transcript.SteerHeader+"\nuse python instead") {
		t.Fatalf("steer appears %d times; last message %s %q", n, last.Role, last.Content)
	}
}

// TestQueuedMessagesSurviveRestart: three messages sent with mode queue
// while a turn runs become the next three turns, in order, although serve
// is SIGKILLed and restarted in between.
func TestQueuedMessagesSurviveRestart(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		if last.Content == "long task" {
			return fakellm.Step{Text: "long task done", Delay: 4 * time.Second}
		}
		return fakellm.TextStep("answer to " + last.Content)
	}))
	defer model.Close()
	u := newUser(t, model.URL())
	u.env["TALARIA_HEARTBEAT_TIMEOUT"] = "3s"
	port := freePort(t)
	srv := u.serve(port)
	send := func(text string) {
		t.Helper()
		if out, stderr, code := u.run(time.Minute, "send", "queued", text, "--mode", "queue"); code != 0 {
			t.Fatalf("send %q: exit %d %s%s", text, code, out, stderr)
		}
	}
	send("long task")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	send("q1")
	send("q2")
	out, _, _ := u.run(time.Minute, "status", "queued")
	if !strings.Contains(out, "queued 1: q1") || !strings.Contains(out, "queued 2: q2") {
		t.Fatalf("status:\n%s", out)
	}
	srv.kill()
	u.serve(port)
	send("q3")

	store, err := models.Open(ctx, u.home+"/talaria.db")
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	waitFor(t, 2*time.Minute, func() bool {
		turns, err := store.Turns(ctx, "queued")
		return err == nil && len(turns) == 4 && turns[3].Status == "completed"
	})
	msgs, err := store.Messages(ctx, "queued")
	if err != nil {
		t.Fatal(err)
	}
	var users, answers []string
	for _, m := range msgs {
		switch m.Role {
		case "user":
			users = append(users, m.Content)
		case "assistant":
			answers = append(answers, m.Content)
		}
	}
	if strings.Join(users, ",") != "long task,q1,q2,q3" ||
		strings.Join(answers, ",") != "long task done,answer to q1,answer to q2,answer to q3" {
		t.Fatalf("users %q answers %q", users, answers)
	}
}

// waitEvent waits (a minute at most) until the store holds an event of
// kind for the turn.
func (u *user) waitEvent(turnID, kind string) {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := models.Open(ctx, filepath.Join(u.home, "talaria.db"))
	if err != nil {
		u.t.Fatal(err)
	}
	defer st.Close()
	for {
		evs, err := st.EventsAfter(ctx, turnID, 0, 0)
		for _, ev := range evs {
			if ev.Kind == kind {
				return
			}
		}
		if ctx.Err() != nil {
			u.t.Fatalf("no %s event of %s within a minute (%v)", kind, turnID, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
