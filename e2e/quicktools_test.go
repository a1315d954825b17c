package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/transcript"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// TestQuickToolsRefuseAFIFO: read_file and write_file on a FIFO in the
// working directory answer the model at once with an error naming it,
// instead of waiting for a writer or reader that never comes; the FIFO is
// left as it was and the turn completes.
func TestQuickToolsRefuseAFIFO(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(
			fakellm.ToolCall{ID: "r1", Name: "read_file", Arguments: `{"path":"pipe"}`},
			fakellm.ToolCall{ID: "w1", Name: "write_file", Arguments: `{"path":"pipe","content":"x"}`},
		),
		fakellm.TextStep("That is a pipe, not a file."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	fifo := filepath.Join(u.workdir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	res, stderr, code := u.chatJSON(3*time.Minute, "-q", "read the pipe")
	if code != 0 || !res.Completed || res.TurnExitReason != workflows.StopTextResponse {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model saw %d requests, want 2", len(reqs))
	}
	results := toolResults(model)
	for _, id := range []string{"r1", "w1"} {
		got := results[id]
		if !strings.Contains(got, "named pipe (FIFO), not a regular file") || strings.Contains(got, "\\n") {
			t.Errorf("result of %s = %q, want a one-line refusal naming the FIFO", id, got)
		}
	}
	if !strings.Contains(results["w1"], "nothing was written") {
		t.Errorf("write_file result = %q", results["w1"])
	}
	// A FIFO with no writer would block a read for ever: that the turn
	// completed shows the refusal did not wait. What the tools themselves
	// took (from the turn's stored tool_start event of each call to its
	// tool_end event, both stamped by the worker around the batch) is
	// logged; BenchmarkQuickToolsRefuseAFIFO (internal/tools) measures it.
	took := toolDurations(t, u, res.TurnID)
	if _, ok := took["r1"]; !ok {
		t.Fatalf("no tool events of the read: %v", took)
	}
	t.Logf("the tools took %v", took)
	if info, err := os.Lstat(fifo); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", info, err)
	}
}

// toolDurations reads a finished turn's tool events from the store: for
// each call id, the time from its first tool_start to its first tool_end
// (a batch run again after a failed first run counts from the first
// start). Every call that started must have ended.
func toolDurations(t *testing.T, u *user, turnID string) map[string]time.Duration {
	t.Helper()
	ctx := context.Background()
	store, err := models.Open(ctx, filepath.Join(u.home, "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	evs, err := store.EventsAfter(ctx, turnID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	started, took := map[string]time.Time{}, map[string]time.Duration{}
	for _, ev := range evs {
		if ev.Kind != events.KindToolStart && ev.Kind != events.KindToolEnd {
			continue
		}
		var te activities.ToolEvent
		if err := json.Unmarshal([]byte(ev.Data), &te); err != nil {
			t.Fatalf("tool event %q: %v", ev.Data, err)
		}
		_, ended := took[te.ID]
		switch at, ok := started[te.ID]; {
		case ev.Kind == events.KindToolStart && !ok:
			started[te.ID] = ev.At
		case ev.Kind == events.KindToolEnd && ok && !ended:
			took[te.ID] = ev.At.Sub(at)
		}
	}
	if len(started) == 0 || len(took) != len(started) {
		t.Fatalf("%d calls started, %d ended (events %+v)", len(started), len(took), evs)
	}
	return took
}

// shownMessages is `talaria sessions show ID --json`'s conversation.
func (u *user) shownMessages(session string) []models.Message {
	u.t.Helper()
	out, stderr, code := u.run(time.Minute, "sessions", "show", session, "--json")
	if code != 0 {
		u.t.Fatalf("sessions show %s: exit %d %s", session, code, stderr)
	}
	var shown struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    string `json:"content"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		u.t.Fatalf("sessions show --json: %v\n%s", err, out)
	}
	msgs := make([]models.Message, len(shown.Messages))
	for i, m := range shown.Messages {
		msgs[i] = models.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
	}
	return msgs
}

// answersByCall counts the tool results of each call id.
func answersByCall(msgs []models.Message) map[string][]string {
	out := map[string][]string{}
	for _, m := range msgs {
		if m.Role == "tool" {
			out[m.ToolCallID] = append(out[m.ToolCallID], m.Content)
		}
	}
	return out
}

// TestStopAnswersEveryCallOfAMixedBatch: `talaria stop` during a batch that
// holds a long command and two quick calls (a read and a write) answers
// every call id exactly once in the store: the quick calls keep their real
// results, the command is answered as interrupted. The next turn of the
// session shows the model those results, with nothing invented by the
// transcript repair.
func TestStopAnswersEveryCallOfAMixedBatch(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.ToolStep(
		fakellm.ToolCall{ID: "t1", Name: "terminal", Arguments: `{"command":"sleep 41.125"}`},
		fakellm.ToolCall{ID: "r1", Name: "read_file", Arguments: `{"path":"notes.txt"}`},
		fakellm.ToolCall{ID: "w1", Name: "write_file", Arguments: `{"path":"out.txt","content":"written before the stop\n"}`},
	))
	defer model.Close()
	u := newUser(t, model.URL())
	if err := os.WriteFile(filepath.Join(u.workdir, "notes.txt"), []byte("the notes say 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u.serve(0)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	wait := u.background(ctx, "chat", "--json", "-q", "run them", "--session", "mixed")
	waitFor(t, time.Minute, func() bool { return exec.Command("pgrep", "-f", "sleep 41.125").Run() == nil })
	waitFor(t, 30*time.Second, func() bool { _, err := os.Stat(filepath.Join(u.workdir, "out.txt")); return err == nil })
	if _, stderr, code := u.run(time.Minute, "stop", "mixed"); code != 0 {
		t.Fatalf("stop: exit %d %s", code, stderr)
	}
	stdout, stderr, code := wait()
	res := decodeResult(t, stdout, stderr)
	if code != 1 || res.TurnExitReason != workflows.StopInterrupted {
		t.Fatalf("exit %d result %+v\n%s", code, res, stderr)
	}
	if exec.Command("pgrep", "-f", "sleep 41.125").Run() == nil {
		t.Fatal("the command survived the stop")
	}

	stored := answersByCall(u.shownMessages("mixed"))
	checkAnswers := func(where string, answers map[string][]string) {
		t.Helper()
		if len(answers) != 3 {
			t.Errorf("%s: answers for %d call ids, want 3: %q", where, len(answers), answers)
		}
		for _, id := range []string{"t1", "r1", "w1"} {
			if len(answers[id]) != 1 {
				t.Errorf("%s: call %s has %d results, want exactly 1: %q", where, id, len(answers[id]), answers[id])
				continue
			}
			if answers[id][0] == transcript.UnansweredResult {
				t.Errorf("%s: call %s answered by the transcript repair", where, id)
			}
		}
		if got := answers["r1"]; len(got) == 1 && !strings.Contains(got[0], "the notes say 42") {
			t.Errorf("%s: read_file result = %q, want the file's content", where, got[0])
		}
		if got := answers["w1"]; len(got) == 1 && !strings.Contains(got[0], `"bytes_written":24`) {
			t.Errorf("%s: write_file result = %q, want its real result", where, got[0])
		}
		if got := answers["t1"]; len(got) == 1 && !strings.Contains(strings.ToLower(got[0]), "interrupted") {
			t.Errorf("%s: terminal result = %q, want it interrupted", where, got[0])
		}
	}
	checkAnswers("store", stored)

	model.Push(fakellm.TextStep("Picking up where we stopped."))
	res2, stderr, code := u.chatJSON(2*time.Minute, "-q", "go on", "--session", "mixed")
	if code != 0 || !res2.Completed {
		t.Fatalf("next turn: exit %d %+v\n%s", code, res2, stderr)
	}
	reqs := model.Requests()
	seen := map[string][]string{}
	for _, m := range reqs[len(reqs)-1].Body.Messages {
		if m.Role == "tool" {
			seen[m.ToolCallID] = append(seen[m.ToolCallID], m.Content)
		}
	}
	checkAnswers("next request", seen)
}

// TestStopDuringAStuckQuickBatch: a batch of quick calls (run inside the
// workflow task) where one waits on a lock held elsewhere: the stuck call is
// answered "timed out" at the quick-tool deadline instead of holding the
// turn for the batch's minute, a stop sent meanwhile ends the turn with
// every call id answered once, and the next turn goes on from there.
func TestStopDuringAStuckQuickBatch(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.ToolStep(
		fakellm.ToolCall{ID: "m1", Name: "memory", Arguments: `{"action":"add","target":"memory","content":"the user likes tea"}`},
		fakellm.ToolCall{ID: "r1", Name: "read_file", Arguments: `{"path":"notes.txt"}`},
	))
	defer model.Close()
	u := newUser(t, model.URL())
	if err := os.WriteFile(filepath.Join(u.workdir, "notes.txt"), []byte("the notes say 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Another process holds the memory file's lock for the whole batch.
	if err := os.MkdirAll(filepath.Join(u.home, "memories"), 0o700); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(u.home, "memories", "MEMORY.md.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	u.serve(0)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	wait := u.background(ctx, "chat", "--json", "-q", "remember this", "--session", "stuck")
	if err := model.WaitFinished(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// The batch runs once its calls have started; its memory call waits up
	// to 10 s for the lock. Stopping then lands inside it.
	u.waitEvent("turn/stuck/1", events.KindToolStart)
	stopped := time.Now()
	if _, stderr, code := u.run(time.Minute, "stop", "stuck"); code != 0 {
		t.Fatalf("stop: exit %d %s", code, stderr)
	}
	stdout, stderr, code := wait()
	res := decodeResult(t, stdout, stderr)
	if code != 1 || res.TurnExitReason != workflows.StopInterrupted {
		t.Fatalf("exit %d result %+v\n%s", code, res, stderr)
	}
	// That the stop waited for the quick call's deadline (10 s), not the
	// minute the whole batch is allowed, is BenchmarkStop's to show; the
	// answers below say the call timed out at its deadline.
	t.Logf("the turn ended %s after the stop", time.Since(stopped).Round(time.Millisecond))
	check := func(where string, answers map[string][]string) {
		t.Helper()
		if len(answers) != 2 || len(answers["m1"]) != 1 || len(answers["r1"]) != 1 {
			t.Fatalf("%s: answers %q, want exactly one for m1 and r1", where, answers)
		}
		if got := answers["m1"][0]; !strings.Contains(got, "timed out") || !strings.Contains(got, "memory did not finish within 10s") {
			t.Errorf("%s: memory result = %q, want timed out", where, got)
		}
		if got := answers["r1"][0]; !strings.Contains(got, "the notes say 42") {
			t.Errorf("%s: read_file result = %q", where, got)
		}
	}
	check("store", answersByCall(u.shownMessages("stuck")))
	if data, err := os.ReadFile(filepath.Join(u.home, "memories", "MEMORY.md")); err == nil && strings.Contains(string(data), "likes tea") {
		t.Errorf("the abandoned memory call took effect: %q", data)
	}

	_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	model.Push(fakellm.TextStep("Noted."))
	res2, stderr, code := u.chatJSON(2*time.Minute, "-q", "go on", "--session", "stuck")
	if code != 0 || !res2.Completed {
		t.Fatalf("next turn: exit %d %+v\n%s", code, res2, stderr)
	}
	reqs := model.Requests()
	seen := map[string][]string{}
	for _, m := range reqs[len(reqs)-1].Body.Messages {
		if m.Role == "tool" {
			seen[m.ToolCallID] = append(seen[m.ToolCallID], m.Content)
		}
	}
	check("next request", seen)
}
