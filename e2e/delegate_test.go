package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/tools"
)

// taskOf is which task a model request serves: the goal marker of its
// first user message, or "parent".
func taskOf(req fakellm.Request) string {
	for _, m := range req.Body.Messages {
		if m.Role == "user" {
			for _, g := range []string{"GOAL-ALPHA", "GOAL-BETA", "GOAL-GAMMA", "GOAL-DELTA", "GOAL-EPSILON"} {
				if strings.Contains(m.Content, g) {
					return g
				}
			}
			return "parent"
		}
	}
	return "parent"
}

// delegatingModel answers the parent by delegating goals (then, once it
// reads their results, with a final answer) and each task, after delay,
// with "<goal> done".
func delegatingModel(goals []map[string]any, delay time.Duration) *fakellm.Server {
	return fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		task := taskOf(req)
		if task != "parent" {
			step := fakellm.TextStep(task + " done")
			step.Delay = delay
			return step
		}
		if last, _ := req.LastMessage(); last.Role == "tool" {
			return fakellm.TextStep("All tasks are done.")
		}
		args, _ := json.Marshal(map[string]any{"tasks": goals})
		return fakellm.ToolStep(fakellm.ToolCall{ID: "d1", Name: "delegate_task", Arguments: string(args)})
	}))
}

// delegateReport is a delegate_task result.
type delegateReport struct {
	Tasks []struct {
		Task        int    `json:"task"`
		Goal        string `json:"goal"`
		Session     string `json:"session"`
		StopReason  string `json:"stop_reason"`
		FinalAnswer string `json:"final_answer"`
	} `json:"tasks"`
	Completed int `json:"completed"`
}

// TestDelegateTasks: a turn delegates two tasks; they run at the same time
// as child turns in their own sessions, each with the tools it was given
// (never clarify, send_message or memory), and the parent reads both
// answers in task order; sessions show links the children to the parent.
func TestDelegateTasks(t *testing.T) {
	t.Parallel()
	model := delegatingModel([]map[string]any{
		{"goal": "GOAL-ALPHA: count the files", "context": "in the working directory"},
		{"goal": "GOAL-BETA: read the notes", "toolsets": []string{"file"}},
	}, 2*time.Second)
	defer model.Close()
	u := newUser(t, model.URL())
	res, stderr, code := u.chatJSON(3*time.Minute, "-q", "split the work", "--session", "boss")
	if code != 0 || !res.Completed || res.FinalResponse == nil || *res.FinalResponse != "All tasks are done." {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	var report delegateReport
	if err := json.Unmarshal([]byte(toolResults(model)["d1"]), &report); err != nil || report.Completed != 2 || len(report.Tasks) != 2 {
		t.Fatalf("delegate_task result: %v\n%s", err, toolResults(model)["d1"])
	}
	for i, want := range []string{"GOAL-ALPHA", "GOAL-BETA"} {
		r := report.Tasks[i]
		if r.Task != i+1 || r.FinalAnswer != want+" done" || r.StopReason != "text_response" || !strings.HasPrefix(r.Goal, want) || r.Session == "" {
			t.Errorf("task %d: %+v", i+1, r)
		}
	}
	// Both tasks were asked before either answered: they ran at once.
	byTask := map[string]fakellm.Request{}
	for _, r := range model.Requests() {
		byTask[taskOf(r)] = r
	}
	alpha, beta := byTask["GOAL-ALPHA"], byTask["GOAL-BETA"]
	if !alpha.Received.Before(beta.Finished) || !beta.Received.Before(alpha.Finished) {
		t.Errorf("the tasks ran one after the other: alpha %s–%s, beta %s–%s", alpha.Received, alpha.Finished, beta.Received, beta.Finished)
	}
	names := func(r fakellm.Request) []string {
		var out []string
		for _, tl := range r.Body.Tools {
			out = append(out, tl.Function.Name)
		}
		return out
	}
	for _, n := range names(alpha) {
		if n == "clarify" || n == "send_message" || n == "memory" {
			t.Errorf("a task was offered %s", n)
		}
	}
	if !slices.Contains(names(alpha), "delegate_task") || !slices.Contains(names(alpha), "terminal") {
		t.Errorf("task alpha's tools: %v", names(alpha))
	}
	fileTools := tools.ExpandToolsets([]string{"file"})
	slices.Sort(fileTools)
	if got := names(beta); !slices.Equal(got, fileTools) || !slices.Contains(got, "read_file") {
		t.Errorf("task beta (toolsets [file]) was offered %v, want %v", got, fileTools)
	}

	out, _, code := u.run(time.Minute, "sessions", "show", "boss")
	if code != 0 || !strings.Contains(out, "task session "+report.Tasks[0].Session) || !strings.Contains(out, "task session "+report.Tasks[1].Session) {
		t.Errorf("sessions show boss: exit %d\n%s", code, out)
	}
	child, _, _ := u.run(time.Minute, "sessions", "show", report.Tasks[1].Session)
	if !strings.Contains(child, "a delegated task of session boss") || !strings.Contains(child, "GOAL-BETA done") {
		t.Errorf("sessions show %s:\n%s", report.Tasks[1].Session, child)
	}
}

// TestDelegateConcurrencyLimit: five tasks with delegation.max_concurrent
// 2 never have more than two running, and all five answer in task order.
func TestDelegateConcurrencyLimit(t *testing.T) {
	t.Parallel()
	var goals []map[string]any
	for _, g := range []string{"GOAL-ALPHA", "GOAL-BETA", "GOAL-GAMMA", "GOAL-DELTA", "GOAL-EPSILON"} {
		goals = append(goals, map[string]any{"goal": g})
	}
	model := delegatingModel(goals, time.Second)
	defer model.Close()
	u := newUser(t, model.URL())
	writeConfig("delegation:\n  max_concurrent: 2\n")(t, u)
	res, stderr, code := u.chatJSON(3*time.Minute, "-q", "five pieces")
	if code != 0 || !res.Completed {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	var report delegateReport
	if err := json.Unmarshal([]byte(toolResults(model)["d1"]), &report); err != nil || report.Completed != 5 {
		t.Fatalf("delegate_task result: %v\n%s", err, toolResults(model)["d1"])
	}
	for i, r := range report.Tasks {
		if r.FinalAnswer != goals[i]["goal"].(string)+" done" {
			t.Errorf("task %d answered %q", i+1, r.FinalAnswer)
		}
	}
	var spans [][2]time.Time
	for _, r := range model.Requests() {
		if taskOf(r) != "parent" {
			spans = append(spans, [2]time.Time{r.Received, r.Finished})
		}
	}
	peak := 0
	for _, s := range spans {
		at := 0
		for _, o := range spans {
			if !o[0].After(s[0]) && o[1].After(s[0]) {
				at++
			}
		}
		peak = max(peak, at)
	}
	if len(spans) != 5 || peak != 2 {
		t.Errorf("%d task requests, at most %d at once; want 5, 2", len(spans), peak)
	}
}

// TestDelegateStop: stopping a turn while its tasks run ends both tasks
// interrupted (each would wait ten minutes for its model, past the test's
// two); the parent answers its delegate_task call once, with both tasks'
// outcomes. How long the stop takes is BenchmarkStop's to show.
func TestDelegateStop(t *testing.T) {
	t.Parallel()
	model := delegatingModel([]map[string]any{{"goal": "GOAL-ALPHA"}, {"goal": "GOAL-BETA"}}, 10*time.Minute)
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	wait := u.background(ctx, "chat", "--json", "-q", "split the work", "--session", "halt")
	if err := model.WaitRequests(ctx, 3); err != nil { // the parent's and both tasks'
		t.Fatal(err)
	}
	// status shows the parent and, under it, both tasks.
	if out, stderr, code := u.run(time.Minute, "status", "halt"); code != 0 || strings.Count(out, "  └ task halt.task1-1-") != 2 ||
		!strings.Contains(out, "running delegate_task") {
		t.Errorf("status halt: exit %d\n%s%s", code, out, stderr)
	}
	if out, stderr, code := u.run(time.Minute, "stop", "halt"); code != 0 {
		t.Fatalf("stop: exit %d\n%s%s", code, out, stderr)
	}
	stdout, stderr, code := wait()
	if res := decodeResult(t, stdout, stderr); code != 1 || !res.Interrupted {
		t.Fatalf("exit %d, result %+v", code, res)
	}
	out, _, _ := u.run(time.Minute, "sessions", "show", "halt", "-o", "json")
	var detail struct {
		Messages []struct {
			Role, Content string
			ToolCallID    string `json:"tool_call_id"`
		}
		Tasks []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(out), &detail); err != nil {
		t.Fatalf("sessions show: %v\n%s", err, out)
	}
	var answers []string
	for _, m := range detail.Messages {
		if m.Role == "tool" {
			answers = append(answers, m.Content)
		}
	}
	if len(answers) != 1 || strings.Count(answers[0], `"stop_reason":"interrupted"`) != 2 || len(detail.Tasks) != 2 {
		t.Fatalf("the delegation's answers: %q; tasks %+v", answers, detail.Tasks)
	}
	for _, task := range detail.Tasks {
		out, _, _ := u.run(time.Minute, "sessions", "show", task.ID)
		if !strings.Contains(out, "interrupted") {
			t.Errorf("task %s did not end interrupted:\n%s", task.ID, out)
		}
	}
}

// TestDelegateSurvivesServeKill: serve is SIGKILLed while two tasks wait
// on their second model call; after a restart the tasks and their parent
// complete, and no finished step of a task runs again: each task's first
// model call and its command ran once.
func TestDelegateSurvivesServeKill(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("restarts a server")
	}
	var killed atomic.Bool
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		task := taskOf(req)
		last, _ := req.LastMessage()
		switch {
		case task == "parent" && last.Role == "tool":
			return fakellm.TextStep("Both tasks are done.")
		case task == "parent":
			return fakellm.ToolStep(fakellm.ToolCall{ID: "d1", Name: "delegate_task", Arguments: `{"tasks":[{"goal":"GOAL-ALPHA"},{"goal":"GOAL-BETA"}]}`})
		case last.Role == "user":
			return fakellm.ToolStep(fakellm.ToolCall{ID: "t-" + task, Name: "terminal", Arguments: `{"command":"echo ` + task + ` >> steps.log"}`})
		case !killed.Load():
			return fakellm.Step{Hang: true} // in flight when serve dies
		}
		return fakellm.TextStep(task + " done")
	}))
	defer model.Close()
	u := newUser(t, model.URL())
	u.env["TALARIA_HEARTBEAT_TIMEOUT"] = "3s"
	port := freePort(t)
	srv := u.serve(port)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	wait := u.background(ctx, "chat", "--json", "-q", "split the work", "--session", "durable-tasks")
	if err := model.WaitRequests(ctx, 5); err != nil { // the parent's, then two per task
		t.Fatal(err)
	}
	killed.Store(true)
	srv.kill()
	u.serve(port)
	stdout, stderr, code := wait()
	res := decodeResult(t, stdout, stderr)
	if code != 0 || !res.Completed || res.FinalResponse == nil || *res.FinalResponse != "Both tasks are done." {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	var report delegateReport
	if err := json.Unmarshal([]byte(toolResults(model)["d1"]), &report); err != nil || report.Completed != 2 {
		t.Fatalf("delegate_task result: %v\n%s", err, toolResults(model)["d1"])
	}
	firsts := map[string]int{}
	for _, r := range model.Requests() {
		if last, _ := r.LastMessage(); last.Role == "user" {
			firsts[taskOf(r)]++
		}
	}
	if firsts["GOAL-ALPHA"] != 1 || firsts["GOAL-BETA"] != 1 || firsts["parent"] != 1 {
		t.Errorf("first model calls per turn: %v; each ran once before the kill", firsts)
	}
	if data, _ := os.ReadFile(filepath.Join(u.workdir, "steps.log")); strings.Count(string(data), "GOAL-ALPHA") != 1 || strings.Count(string(data), "GOAL-BETA") != 1 {
		t.Errorf("steps.log = %q; each task's command ran once", data)
	}
}

// TestDelegateApproval: a task's command that needs approval waits; the
// person following the parent sees it in status and approves it with
// talaria approve PARENT; the task runs it and the parent completes.
func TestDelegateApproval(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		task := taskOf(req)
		last, _ := req.LastMessage()
		switch {
		case task == "parent" && last.Role == "tool":
			return fakellm.TextStep("The build directory is gone.")
		case task == "parent":
			return fakellm.ToolStep(fakellm.ToolCall{ID: "d1", Name: "delegate_task", Arguments: `{"tasks":[{"goal":"GOAL-ALPHA: remove ./build"}]}`})
		case last.Role == "tool":
			return fakellm.TextStep("GOAL-ALPHA done")
		}
		return fakellm.ToolStep(fakellm.ToolCall{ID: "rm1", Name: "terminal", Arguments: `{"command":"rm -rf ./build"}`})
	}))
	defer model.Close()
	u := newUser(t, model.URL())
	writeConfig("approvals:\n  noninteractive: wait\n")(t, u)
	if err := os.MkdirAll(filepath.Join(u.workdir, "build", "obj"), 0o755); err != nil {
		t.Fatal(err)
	}
	u.serve(0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	wait := u.background(ctx, "chat", "--json", "-q", "clean up", "--session", "ask")
	deadline := time.Now().Add(time.Minute)
	for {
		out, _, _ := u.run(time.Minute, "status", "ask")
		if strings.Contains(out, "approval needed: rm -rf ./build") && strings.Contains(out, "approve: talaria approve ask") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed the task's approval:\n%s", out)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if out, stderr, code := u.run(time.Minute, "approve", "ask"); code != 0 || !strings.Contains(out, "approved: rm -rf ./build") {
		t.Fatalf("approve: exit %d\n%s%s", code, out, stderr)
	}
	stdout, stderr, code := wait()
	if res := decodeResult(t, stdout, stderr); code != 0 || !res.Completed {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	if _, err := os.Stat(filepath.Join(u.workdir, "build")); !os.IsNotExist(err) {
		t.Errorf("./build is still there: %v", err)
	}
	if !strings.Contains(stderr, "a delegated task, session ask.task1-1-1") {
		t.Errorf("chat did not say the approval was a task's:\n%s", stderr)
	}
}

// TestDelegateEvents: a turn's live events say when each task starts and
// ends; chat shows them under the parent.
func TestDelegateEvents(t *testing.T) {
	t.Parallel()
	model := delegatingModel([]map[string]any{{"goal": "GOAL-ALPHA: look around"}}, 0)
	defer model.Close()
	u := newUser(t, model.URL())
	_, stderr, code := u.run(3*time.Minute, "chat", "-q", "delegate it", "--session", "ev")
	if code != 0 || !strings.Contains(stderr, "↳ task ev.task1-1-1: GOAL-ALPHA: look around") || !strings.Contains(stderr, "↳ task ev.task1-1-1 ended: text_response") {
		t.Errorf("exit %d; stderr:\n%s", code, stderr)
	}
}
