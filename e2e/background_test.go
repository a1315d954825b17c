package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// echoingModel answers every turn with "<its first user message> — done",
// after delay.
func echoingModel(delay time.Duration) *fakellm.Server {
	return heldEchoingModel(delay, nil)
}

// heldEchoingModel is echoingModel whose answers also wait until release
// is closed (a nil release holds nothing).
func heldEchoingModel(delay time.Duration, release <-chan struct{}) *fakellm.Server {
	return fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		if release != nil {
			<-release
		}
		first := ""
		for _, m := range req.Body.Messages {
			if m.Role == "user" {
				first = m.Content
				break
			}
		}
		step := fakellm.TextStep(first + " — done")
		step.Delay = delay
		return step
	}))
}

// TestRunBackground: run --background returns while serve runs the task
// (its model answers only once the command has returned); its answer is
// delivered locally when it ends, and run --wait reports how it ended.
// Without serve, --background is refused.
func TestRunBackground(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var releaseOnce sync.Once
	answer := func() { releaseOnce.Do(func() { close(release) }) }
	defer answer()
	model := heldEchoingModel(0, release)
	defer model.Close()
	u := newUser(t, model.URL())
	if _, stderr, code := u.run(time.Minute, "run", "--background", "tidy up"); code != 2 || !strings.Contains(stderr, "needs a running 'talaria serve'") {
		t.Fatalf("--background without serve: exit %d %q", code, stderr)
	}
	u.serve(0)
	out, stderr, code := u.run(time.Minute, "run", "--background", "summarise the logs", "--session", "bg1")
	if code != 0 || !strings.Contains(out, "started bg1 in the background; its outcome goes to local") {
		t.Fatalf("run --background: exit %d\n%s%s", code, out, stderr)
	}
	answer()
	stdout, stderr, code := u.run(time.Minute, "run", "--wait", "bg1", "--json")
	res := decodeGoal(t, stdout, stderr)
	if code != 0 || res.Outcome != workflows.GoalDone || res.TurnCount != 1 || !strings.HasPrefix(res.Delivered, "local → ") {
		t.Fatalf("run --wait: exit %d %+v\n%s", code, res, stderr)
	}
	path := strings.TrimPrefix(res.Delivered, "local → ")
	if data, err := os.ReadFile(path); err != nil || !strings.Contains(string(data), "summarise the logs — done") ||
		!strings.HasPrefix(path, filepath.Join(u.home, "cron", "output")) {
		t.Errorf("the delivered answer at %s: %q %v", path, data, err)
	}
	if _, stderr, code := u.run(time.Minute, "run", "--wait", "nosuch"); code != 1 || !strings.Contains(stderr, `no run in session "nosuch"`) {
		t.Errorf("run --wait nosuch: exit %d %q", code, stderr)
	}
}

// TestTelegramBackground: /background runs a task in a session of its own
// and posts its answer to the chat when it is done.
func TestTelegramBackground(t *testing.T) {
	t.Parallel()
	model := echoingModel(time.Second)
	defer model.Close()
	_, tg, _ := telegramServeConfig(t, model, "")
	tg.Send(42, 0, "/background count the open issues")
	waitText(t, tg, "Started in the background (session bg-", 30*time.Second)
	waitText(t, tg, "count the open issues — done", time.Minute)
	tg.Send(42, 0, "/goal")
	waitText(t, tg, "Usage: /goal GOAL", 30*time.Second)
}

// TestAPIBackgroundRun: POST /v1/runs with background runs the input in a
// session of its own, answers at once with the run's id (GET follows it as
// any run), and delivers the answer to the webhook when it ends; a used
// session is refused.
func TestAPIBackgroundRun(t *testing.T) {
	t.Parallel()
	model := echoingModel(time.Second)
	defer model.Close()
	got := make(chan string, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Text, Status string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		got <- body.Status + ": " + body.Text
	}))
	defer hook.Close()
	u := newUser(t, model.URL())
	_, base := u.apiServe()
	id, session := startRun(t, base, map[string]any{"input": "collect the metrics", "background": true, "deliver": []string{"webhook:" + hook.URL}})
	if id == "" || session == "" {
		t.Fatalf("run %q in %q", id, session)
	}
	r := waitRun(t, base, id, time.Minute, func(r runInfo) bool { return r.Status == "completed" })
	if r.FinalText == nil || *r.FinalText != "collect the metrics — done" {
		t.Errorf("run: %+v", r)
	}
	select {
	case delivered := <-got:
		if delivered != "done: collect the metrics — done" {
			t.Errorf("the webhook got %q", delivered)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the outcome never reached the webhook")
	}
	var refusal struct {
		Error struct{ Code string } `json:"error"`
	}
	if status := apiCall(t, http.MethodPost, base+"/v1/runs", map[string]any{"input": "again", "background": true, "session_id": session}, &refusal); status != http.StatusConflict || refusal.Error.Code != "session_in_use" {
		t.Errorf("a background run in a used session: %d %+v", status, refusal)
	}
}
