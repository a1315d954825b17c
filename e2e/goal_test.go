package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/workflows"
)

// goalModel works on any turn by reading notes.txt until its budget is
// spent (then summarises), and answers the progress checks in order with
// verdicts; it counts the checks.
func goalModel(checks *atomic.Int32, verdicts ...string) *fakellm.Server {
	return fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		switch {
		case strings.HasPrefix(last.Content, turnapi.JudgeGoalMarker):
			n := int(checks.Add(1))
			v := verdicts[min(n, len(verdicts))-1]
			return fakellm.TextStep(fmt.Sprintf(`{"verdict": %q, "reason": "check %d"}`, v, n))
		case len(req.Body.Tools) == 0:
			return fakellm.TextStep("Summary of the progress so far.")
		}
		return fakellm.ToolStep(fakellm.ToolCall{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"notes.txt","offset":%d,"limit":1}`, req.Index%90+1)})
	}))
}

// goalUser is a user whose working directory has notes.txt to read.
func goalUser(t *testing.T, model *fakellm.Server) *user {
	u := newUser(t, model.URL())
	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprintf("note %d", i))
	}
	if err := os.WriteFile(filepath.Join(u.workdir, "notes.txt"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return u
}

// decodeGoal reads talaria run --json's result.
func decodeGoal(t *testing.T, stdout, stderr string) workflows.GoalResult {
	t.Helper()
	var res workflows.GoalResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("run --json: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	return res
}

// TestGoalRunsUntilDone: a goal whose turns each spend their 5 iterations
// is checked after each; continue, continue, done makes three turns in one
// conversation and ends done, each turn said on stderr.
func TestGoalRunsUntilDone(t *testing.T) {
	t.Parallel()
	var checks atomic.Int32
	model := goalModel(&checks, "continue", "continue", "done")
	defer model.Close()
	u := goalUser(t, model)
	stdout, stderr, code := u.run(3*time.Minute, "run", "--goal", "read all the notes", "--max-iterations", "5", "--session", "g1", "--json")
	res := decodeGoal(t, stdout, stderr)
	if code != 0 || res.Outcome != workflows.GoalDone || res.TurnCount != 3 || checks.Load() != 3 || res.Reason != "check 3" {
		t.Fatalf("exit %d, result %+v, %d checks\n%s", code, res, checks.Load(), stderr)
	}
	for i, tn := range res.Turns {
		if tn.Number != i+1 || tn.StopReason != workflows.StopMaxIterations || tn.APICalls != 6 {
			t.Errorf("turn %d: %+v", i+1, tn)
		}
	}
	// What each turn does shows as it runs: every tool call of the three
	// turns (five each), before the line of the turn's end.
	if n := strings.Count(stderr, "⚙ read_file"); n != 15 {
		t.Errorf("stderr shows %d read_file calls, want 15:\n%s", n, stderr)
	}
	if i, j := strings.Index(stderr, "⚙ read_file"), strings.Index(stderr, "turn 1: "); i < 0 || j < i {
		t.Errorf("turn 1's tools do not show before its end:\n%s", stderr)
	}
	for _, line := range []string{"turn 1: max_iterations, 6 model calls — continue: check 1", "turn 3: max_iterations, 6 model calls — done: check 3"} {
		if !strings.Contains(stderr, line) {
			t.Errorf("stderr lacks %q:\n%s", line, stderr)
		}
	}
	// The turns continue one conversation: the last turn's request holds the
	// goal and both continuations.
	reqs := model.Requests()
	var users []string
	for _, m := range reqs[len(reqs)-2].Body.Messages {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	joined := strings.Join(users, "\n")
	if len(users) < 3 || users[0] != "read all the notes" || strings.Count(joined, "Continue working toward the goal") != 2 || !strings.Contains(joined, "continuation 2") {
		t.Errorf("the third turn saw user messages %q", users)
	}
	if _, stderr, code := u.run(time.Minute, "run", "--goal", "again", "--session", "g1"); code != 2 || !strings.Contains(stderr, "a goal runs in a session of its own") {
		t.Errorf("a goal in a used session: exit %d %q", code, stderr)
	}
}

// TestGoalBudget: with --max-iterations-total 7 and 5 iterations a turn,
// the goal stops after its first turn, saying which budget is spent.
func TestGoalBudget(t *testing.T) {
	t.Parallel()
	var checks atomic.Int32
	model := goalModel(&checks, "continue")
	defer model.Close()
	u := goalUser(t, model)
	stdout, stderr, code := u.run(3*time.Minute, "run", "--goal", "read all the notes", "--max-iterations", "5", "--max-iterations-total", "7", "--json")
	res := decodeGoal(t, stdout, stderr)
	if code != 1 || res.Outcome != workflows.GoalBudgetSpent || res.TurnCount != 1 || res.Iterations != 6 ||
		!strings.Contains(res.Reason, "used 6 of its 7 model calls (--max-iterations-total)") {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	if _, stderr, code := u.run(time.Minute, "run", "--goal", "x", "--max-cost", "1", "-m", "unpriced-model"); code != 2 || !strings.Contains(stderr, "prices.unpriced-model.input") {
		t.Errorf("--max-cost without a price: exit %d %q", code, stderr)
	}
}

// TestGoalSurvivesRestart: serve is SIGKILLed during the goal's second
// turn; after the restart the goal goes on and ends as it would have:
// three turns, done, each check made once per turn.
func TestGoalSurvivesRestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("restarts a server")
	}
	var checks atomic.Int32
	model := goalModel(&checks, "continue", "continue", "done")
	defer model.Close()
	u := goalUser(t, model)
	u.env["TALARIA_HEARTBEAT_TIMEOUT"] = "3s"
	port := freePort(t)
	srv := u.serve(port)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	wait := u.background(ctx, "run", "--goal", "read all the notes", "--max-iterations", "5", "--session", "g2", "--json")
	if err := model.WaitRequests(ctx, 9); err != nil { // turn 1 (6), its check, and into turn 2
		t.Fatal(err)
	}
	srv.kill()
	u.serve(port)
	stdout, stderr, code := wait()
	res := decodeGoal(t, stdout, stderr)
	if code != 0 || res.Outcome != workflows.GoalDone || res.TurnCount != 3 || checks.Load() != 3 {
		t.Fatalf("exit %d, result %+v, %d checks\n%s", code, res, checks.Load(), stderr)
	}
}

// TestGoalStop: talaria stop ends a goal, interrupting its running turn.
func TestGoalStop(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		return fakellm.Step{Text: "slow", ChunkDelay: 30 * time.Second}
	}))
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	wait := u.background(ctx, "run", "--goal", "take your time", "--session", "gs", "--json")
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := u.run(time.Minute, "status", "gs"); code != 0 || !strings.Contains(out, "session gs: a run of 0 turns so far") ||
		!strings.Contains(out, "running turn/gs/1") {
		t.Errorf("status gs: exit %d\n%s%s", code, out, stderr)
	}
	if out, stderr, code := u.run(time.Minute, "stop", "gs"); code != 0 || !strings.Contains(out, "goal/gs") {
		t.Fatalf("stop: exit %d\n%s%s", code, out, stderr)
	}
	stdout, stderr, code := wait()
	if res := decodeGoal(t, stdout, stderr); code != 1 || res.Outcome != workflows.GoalInterrupted || res.TurnCount != 1 {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
}

// TestGoalTimeBudget: --max-hours (3.6 s) ends a turn whose model would
// stream for ten minutes, past the two the run is given; the goal ends
// budget_spent, naming the budget.
func TestGoalTimeBudget(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		return fakellm.Step{Text: "slow", ChunkDelay: 10 * time.Minute}
	}))
	defer model.Close()
	u := newUser(t, model.URL())
	stdout, stderr, code := u.run(2*time.Minute, "run", "--goal", "take your time", "--max-hours", "0.001", "--json")
	res := decodeGoal(t, stdout, stderr)
	if code != 1 || res.Outcome != workflows.GoalBudgetSpent || !strings.Contains(res.Reason, "--max-hours") {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
}
