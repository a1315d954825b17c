package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// waitPending polls `talaria status --json` until the running turn waits
// for an approval or a question.
func (u *user) waitPending(session string) workflows.Progress {
	u.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		out, _, code := u.run(time.Minute, "status", session, "--json")
		var st struct {
			Turn *workflows.Progress `json:"turn"`
		}
		if code == 0 && json.Unmarshal([]byte(out), &st) == nil && st.Turn != nil &&
			(st.Turn.PendingApproval != nil || st.Turn.PendingQuestion != nil) {
			return *st.Turn
		}
		time.Sleep(200 * time.Millisecond)
	}
	u.t.Fatalf("session %s never waited for a person", session)
	return workflows.Progress{}
}

// TestApprovals: a dangerous command waits (across a restart of serve) and
// runs once approved; a denied one is refused to the model; a blocked one
// never runs and is not even asked about.
func TestApprovals(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "a1", Name: "terminal", Arguments: `{"command":"rm -r approved-dir && echo removed"}`}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "a2", Name: "terminal", Arguments: `{"command":"rm -rf denied-dir"}`}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "a3", Name: "terminal", Arguments: `{"command":"rm -rf /"}`}),
		fakellm.TextStep("Done with the cleanup."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	u.waitForPeople() // answered from another process
	for _, d := range []string{"approved-dir", "denied-dir"} {
		if err := os.MkdirAll(filepath.Join(u.workdir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	port := freePort(t)
	srv := u.serve(port)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	wait := u.background(ctx, "chat", "--json", "-q", "clean up", "--session", "appr")

	p := u.waitPending("appr")
	if p.PendingApproval.Command != "rm -r approved-dir && echo removed" || p.PendingApproval.Rule != "recursive_delete" {
		t.Fatalf("pending approval = %+v", p.PendingApproval)
	}
	// The wait is durable: serve dies and comes back, the turn still waits.
	srv.kill()
	u.serve(port)
	p = u.waitPending("appr")
	if _, err := os.Stat(filepath.Join(u.workdir, "approved-dir")); err != nil {
		t.Fatal("the command ran before it was approved")
	}
	if out, stderr, code := u.run(time.Minute, "approve", "appr"); code != 0 || !strings.Contains(out, "approved") {
		t.Fatalf("approve: exit %d %s%s", code, out, stderr)
	}
	p = u.waitPending("appr")
	if p.PendingApproval == nil || !strings.Contains(p.PendingApproval.Command, "denied-dir") {
		t.Fatalf("second pending = %+v", p)
	}
	if out, stderr, code := u.run(time.Minute, "deny", "appr"); code != 0 || !strings.Contains(out, "denied") {
		t.Fatalf("deny: exit %d %s%s", code, out, stderr)
	}
	stdout, stderr, code := wait()
	res := decodeResult(t, stdout, stderr)
	if code != 0 || !res.Completed {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	if _, err := os.Stat(filepath.Join(u.workdir, "approved-dir")); !os.IsNotExist(err) {
		t.Fatal("the approved command did not run")
	}
	if _, err := os.Stat(filepath.Join(u.workdir, "denied-dir")); err != nil {
		t.Fatal("the denied command ran")
	}
	results := map[string]string{}
	for _, m := range res.Messages {
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Content
		}
	}
	if !strings.Contains(results["a1"], "removed") || !strings.Contains(results["a2"], "DENIED") || !strings.Contains(results["a3"], "BLOCKED") {
		t.Fatalf("results = %q", results)
	}
	assertPaired(t, res.Messages)
	// Nothing waits any more.
	if _, stderr, code := u.run(time.Minute, "approve", "appr"); code != 1 {
		t.Fatalf("approve with nothing pending: exit %d %s", code, stderr)
	}
}

// TestClarify: the model asks the user; the turn waits across a restart of
// serve and continues with the answer.
func TestClarify(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "q1", Name: "clarify", Arguments: `{"question":"Which colour should the button be?","choices":["red","blue"]}`}),
		fakellm.TextStep("Making it blue."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	u.waitForPeople() // answered from another process
	port := freePort(t)
	srv := u.serve(port)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	wait := u.background(ctx, "chat", "--json", "-q", "style the button", "--session", "ask")
	p := u.waitPending("ask")
	if p.PendingQuestion == nil || p.PendingQuestion.Question != "Which colour should the button be?" || len(p.PendingQuestion.Choices) != 2 {
		t.Fatalf("pending = %+v", p)
	}
	srv.kill()
	u.serve(port)
	u.waitPending("ask")
	if out, stderr, code := u.run(time.Minute, "answer", "ask", "blue, please"); code != 0 {
		t.Fatalf("answer: exit %d %s%s", code, out, stderr)
	}
	stdout, stderr, code := wait()
	res := decodeResult(t, stdout, stderr)
	if code != 0 || !res.Completed || *res.FinalResponse != "Making it blue." {
		t.Fatalf("exit %d result %+v\n%s", code, res, stderr)
	}
	last, _ := model.Requests()[1].LastMessage()
	if last.Role != "tool" || last.ToolCallID != "q1" || last.Content != "blue, please" {
		t.Fatalf("the model got %+v", last)
	}
}
