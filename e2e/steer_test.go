package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/textline"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/workflows"
)

// steerModel is a model whose every turn runs one short command and then
// answers; each answer waits until the test lets it go (final: the test
// learns the turn's last model call is in flight). Progress checks answer
// verdicts in order.
type steerModel struct {
	*fakellm.Server
	final   chan fakellm.Request
	release chan struct{}
	done    chan struct{}
	checks  atomic.Int32
}

// Close lets every held answer go and stops the server.
func (m *steerModel) Close() {
	close(m.done)
	m.Server.Close()
}

func newSteerModel(verdicts ...string) *steerModel {
	m := &steerModel{final: make(chan fakellm.Request, 16), release: make(chan struct{}, 16), done: make(chan struct{})}
	m.Server = fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		switch {
		case strings.HasPrefix(last.Content, turnapi.JudgeGoalMarker):
			n := int(m.checks.Add(1))
			return fakellm.TextStep(fmt.Sprintf(`{"verdict": %q, "reason": "check %d"}`, verdicts[min(n, len(verdicts))-1], n))
		case len(req.Body.Tools) == 0:
			return fakellm.TextStep("Summary.")
		case !ranTool(req):
			return fakellm.ToolStep(fakellm.ToolCall{Name: "terminal", Arguments: `{"command":"sleep 1; echo worked"}`})
		}
		m.final <- req
		select {
		case <-m.release:
		case <-m.done:
		}
		return fakellm.TextStep("Done with this part.")
	}))
	return m
}

// ranTool reports whether the request's turn already has a tool result:
// one after the last user message that is not a steer.
func ranTool(req fakellm.Request) bool {
	msgs := req.Body.Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		switch msgs[i].Role {
		case "tool":
			return true
		case "user":
			return false
		}
	}
	return false
}

// nextFinal waits for the next turn's last model call and returns its
// request (held, so not yet among Requests); it shows the requests so far
// when none comes.
func (m *steerModel) nextFinal(t *testing.T) fakellm.Request {
	t.Helper()
	select {
	case r := <-m.final:
		return r
	case <-time.After(3 * time.Minute):
		for _, r := range m.Requests() {
			last, _ := r.LastMessage()
			t.Logf("request %d: %d messages, tools %d, last %s %q", r.Index, len(r.Body.Messages), len(r.Body.Tools), last.Role, textline.Of(last.Content, 200))
		}
		t.Fatal("no last model call came")
	}
	return fakellm.Request{}
}

// mentions counts text in a request's messages.
func mentions(req fakellm.Request, text string) int {
	n := 0
	for _, m := range req.Body.Messages {
		n += strings.Count(m.Content, text)
	}
	return n
}

// waitMention waits for a model request that mentions text, and checks it
// mentions it once.
func waitMention(t *testing.T, m *steerModel, text string) {
	t.Helper()
	waitFor(t, 3*time.Minute, func() bool {
		for _, r := range m.Requests() {
			if n := mentions(r, text); n > 0 {
				if n != 1 {
					t.Fatalf("request %d mentions %q %d times", r.Index, text, n)
				}
				return true
			}
		}
		return false
	})
}

// steerRun steers an API run and returns the answer's status and next run.
func steerRun(t *testing.T, base, run, text string) (string, string) {
	t.Helper()
	var out struct {
		Status    string `json:"status"`
		NextRunID string `json:"next_run_id"`
	}
	if status := apiCall(t, http.MethodPost, base+"/v1/runs/"+run+"/steer", map[string]string{"text": text}, &out); status != http.StatusAccepted {
		t.Fatalf("steer %s: %d %+v", run, status, out)
	}
	return out.Status, out.NextRunID
}

// TestSteersReachAGoal: steers for a session whose goal runs reach the
// model through the session's coordinator, which runs the goal's turns: one
// sent while a turn works (by the CLI) reaches that turn; one sent during a
// turn's last model call runs next, as a turn of its own before the goal's
// next turn, whose conversation then holds it.
func TestSteersReachAGoal(t *testing.T) {
	t.Parallel()
	m := newSteerModel("continue", "done")
	defer m.Close()
	u := newUser(t, m.URL())
	_, base := u.apiServe()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	wait := u.background(ctx, "run", "--goal", "do the work", "--session", "gsteer", "--json")
	if err := m.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := u.run(time.Minute, "steer", "gsteer", "first steer"); code != 0 || !strings.Contains(out, "sent to session gsteer") {
		t.Fatalf("steer: exit %d %s%s", code, out, stderr)
	}
	waitMention(t, m, "first steer")

	m.nextFinal(t) // turn 1's last call is in flight
	status, next := steerRun(t, base, "run_1_gsteer", "second steer")
	t.Logf("steer during turn 1's last call: %s %s", status, next)
	go func() { // every answer goes from here on
		for {
			select {
			case m.release <- struct{}{}:
			case <-m.done:
				return
			}
		}
	}()
	waitMention(t, m, "second steer")
	stdout, stderr, code := wait()
	res := decodeGoal(t, stdout, stderr)
	if code != 0 || res.Outcome != workflows.GoalDone || res.TurnCount != 2 {
		t.Fatalf("goal: exit %d %+v\n%s", code, res, stderr)
	}
	// The goal's second turn came after the steer's: its conversation
	// holds the steer once.
	for _, r := range m.Requests() {
		last, _ := r.LastMessage()
		if strings.Contains(last.Content, "continuation 1") && mentions(r, "second steer") != 1 {
			t.Errorf("the goal's second turn (request %d) mentions the steer %d times", r.Index, mentions(r, "second steer"))
		}
	}
}

// TestSteerInLastCallRunsNext: a steer sent while a turn makes its last
// model call reaches the model as the session's next turn.
func TestSteerInLastCallRunsNext(t *testing.T) {
	t.Parallel()
	m := newSteerModel("done")
	defer m.Close()
	u := newUser(t, m.URL())
	_, base := u.apiServe()
	run, _ := startRun(t, base, map[string]any{"input": "do the work", "session_id": "lastcall"})
	<-m.final
	status, next := steerRun(t, base, run, "late steer")
	t.Logf("steer during the last call: %s %s", status, next)
	go func() {
		for range m.final {
			m.release <- struct{}{}
		}
	}()
	m.release <- struct{}{}
	waitMention(t, m, "late steer")
}

// TestSteerJustAfterRestart: serve is killed while a turn works and
// started again; a steer sent at once reaches the model, or is answered
// ended_first with the run it became, which then has it.
func TestSteerJustAfterRestart(t *testing.T) {
	t.Parallel()
	m := newSteerModel("done")
	defer m.Close()
	u := newUser(t, m.URL())
	u.env["TALARIA_HEARTBEAT_TIMEOUT"] = "3s"
	port := freePort(t)
	srv, base := u.apiServeOn(port)
	run, _ := startRun(t, base, map[string]any{"input": "do the work", "session_id": "restarted"})
	m.nextFinal(t) // the turn's last call is in flight: held until released
	srv.kill()
	u.apiServeOn(port)
	status, next := steerRun(t, base, run, "steer after restart")
	t.Logf("steer after the restart: %s %s", status, next)
	if status != "steered" && (status != "ended_first" || next == "") {
		t.Fatalf("steer answered %s, next run %q", status, next)
	}
	go func() {
		for range m.final {
			m.release <- struct{}{}
		}
	}()
	m.release <- struct{}{}
	waitMention(t, m, "steer after restart")
}
