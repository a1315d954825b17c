package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/approval"
	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/workflows"
)

// TestEscalationOutsideTheSandbox: a command the sandbox stops says so and
// how to ask; asked again with outside_sandbox, it waits for a person and
// runs outside only once approved; nobody answering refuses it; a program
// of execute_code cannot ask at all.
func TestEscalationOutsideTheSandbox(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	target := filepath.Join(out, "made.txt")
	outside := `{"command":"touch ` + target + `","outside_sandbox":true,"reason":"the file lives outside the workspace"}`
	viaCode := `{"language":"python","code":"import talaria_tools as t\nprint(t.call('terminal', command='touch ` + target + `', outside_sandbox=True, reason='x'))"}`
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "s1", Name: "terminal", Arguments: `{"command":"touch ` + target + `"}`}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "s2", Name: "terminal", Arguments: outside}),
		// A program's call named after a call of the batch gains nothing.
		fakellm.ToolStep(fakellm.ToolCall{ID: "e1", Name: tools.ExecuteCodeName, Arguments: viaCode},
			fakellm.ToolCall{ID: "e1.code1", Name: "terminal", Arguments: `{"command":"true"}`}),
		fakellm.TextStep("nobody answered"),
		fakellm.ToolStep(fakellm.ToolCall{ID: "s3", Name: tools.ExecuteCodeName, Arguments: viaCode}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "s4", Name: "terminal", Arguments: outside}),
		fakellm.TextStep("made it"),
	)
	defer model.Close()
	rt := startRuntime(t, model)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ws := t.TempDir()
	turn := func(session string, timeout time.Duration) workflows.ConversationResult {
		res, err := rt.RunTurn(ctx, workflows.TurnInput{SessionID: session, UserMessage: "make the file", Model: fakellm.DefaultModel,
			MaxIterations: 8, Workdir: ws, Approvals: workflows.ApprovalSettings{Mode: workflows.ApprovalAsk, Timeout: timeout}})
		if err != nil || !res.Completed {
			t.Fatalf("turn: %+v, %v", res, err)
		}
		return res
	}
	turn("unanswered", 300*time.Millisecond)
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the file was made without a person's approval")
	}
	results := toolResults(t, rt, "unanswered")
	if r := results["s1"]; !strings.Contains(r, `"sandbox":"This ran in the sandbox`) || !strings.Contains(r, `outside_sandbox`) {
		t.Errorf("the sandboxed failure does not say how to ask: %s", r)
	}
	if r := results["s2"]; !strings.Contains(strings.ToLower(r), "not approved") && !strings.Contains(strings.ToLower(r), "refused") {
		t.Errorf("an unanswered escalation: %s", r)
	}
	if r := results["e1"]; !strings.Contains(r, "cannot ask to run a command outside the sandbox") {
		t.Errorf("a program escalated: %s", r)
	}

	approved := make(chan turnapi.Assessment, 1)
	go func() {
		p, ev := waitForEvent(ctx, t, rt, "answered", events.KindApproval)
		var a struct {
			Rule, Pattern string
		}
		_ = json.Unmarshal([]byte(ev.Data), &a)
		approved <- turnapi.Assessment{Rule: a.Rule, Pattern: a.Pattern}
		_ = rt.Signal(ctx, p.TurnID, workflows.SignalApproval, workflows.ApprovalDecision{Choice: turnapi.ChoiceOnce})
	}()
	turn("answered", time.Minute)
	if a := <-approved; a.Rule != approval.RuleOutsideSandbox || !strings.Contains(a.Pattern, `outside the sandbox: "touch`) {
		t.Errorf("the approval asked: %+v", a)
	}
	results = toolResults(t, rt, "answered")
	if r := results["s3"]; !strings.Contains(r, "cannot ask to run a command outside the sandbox") {
		t.Errorf("execute_code escalated: %s", r)
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the approved command did not run outside the sandbox: %v (%s)", err, results["s4"])
	}
}

// toolResults are a session's tool results by call id.
func toolResults(t *testing.T, rt *Runtime, session string) map[string]string {
	t.Helper()
	msgs, err := rt.Store.Messages(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range msgs {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}
