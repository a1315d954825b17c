package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/workflows"
)

func args(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// roles lists the messages' roles, comma-separated.
func roles(msgs []turnapi.Message) string {
	r := make([]string, 0, len(msgs))
	for _, m := range msgs {
		r = append(r, m.Role)
	}
	return strings.Join(r, ",")
}

// assertPaired checks that every tool call in msgs is answered by exactly one
// tool result, right after its assistant message, in call order.
func assertPaired(t *testing.T, msgs []turnapi.Message) {
	t.Helper()
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == openai.ChatMessageRoleTool {
			t.Fatalf("message %d: tool result %q not directly after its call", i, m.ToolCallID)
		}
		if m.Role != openai.ChatMessageRoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		for j, call := range m.ToolCalls {
			if i+1+j >= len(msgs) {
				t.Fatalf("call %s has no result", call.ID)
			}
			res := msgs[i+1+j]
			if res.Role != openai.ChatMessageRoleTool || res.ToolCallID != call.ID {
				t.Fatalf("result for call %s: got role=%s id=%s", call.ID, res.Role, res.ToolCallID)
			}
		}
		i += len(m.ToolCalls)
	}
}

// TestChatWriteReadAnswer: write_file, read_file, then a text answer, through
// the real binary and its embedded server.
func TestChatWriteReadAnswer(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "call_w", Name: "write_file",
			Arguments: args(t, map[string]string{"path": "notes/hello.txt", "content": "hello from talaria\n"})}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "call_r", Name: "read_file",
			Arguments: args(t, map[string]string{"path": "notes/hello.txt"})}),
		fakellm.TextStep("The file says hello."),
	)
	defer model.Close()
	u := newUser(t, model.URL())

	res, stderr, code := u.chatJSON(3*time.Minute, "-q", "write a file and read it back")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if !res.Completed || res.Partial || res.Failed || res.TurnExitReason != workflows.StopTextResponse || res.APICalls != 3 {
		t.Fatalf("result = %+v", res)
	}
	if res.FinalResponse == nil || *res.FinalResponse != "The file says hello." || res.Error != nil {
		t.Fatalf("final = %v, error = %v", res.FinalResponse, res.Error)
	}
	data, err := os.ReadFile(filepath.Join(u.workdir, "notes", "hello.txt"))
	if err != nil || string(data) != "hello from talaria\n" {
		t.Fatalf("file on disk = %q, %v", data, err)
	}
	if got := roles(res.Messages); got != "user,assistant,tool,assistant,tool,assistant" {
		t.Fatalf("roles = %s", got)
	}
	assertPaired(t, res.Messages)
	if !strings.Contains(res.Messages[4].Content, "hello from talaria") {
		t.Fatalf("read_file result = %q", res.Messages[4].Content)
	}
	if res.SessionID == "" || res.TurnID != workflows.TurnWorkflowID(res.SessionID, 1) || res.Model != "fake-model" {
		t.Fatalf("ids = %q %q %q", res.SessionID, res.TurnID, res.Model)
	}
	if res.Usage.TotalTokens == 0 {
		t.Fatalf("usage not reported: %+v", res.Usage)
	}
	reqs := model.Requests()
	if len(reqs) != 3 || len(reqs[0].Body.Tools) == 0 {
		t.Fatalf("model saw %d requests", len(reqs))
	}
	// The second request carries the first call's result, paired by id.
	last := reqs[1].Body.Messages[len(reqs[1].Body.Messages)-1]
	if last.Role != "tool" || last.ToolCallID != "call_w" {
		t.Fatalf("second request ends with %+v", last)
	}

	// The same session continues with --session: turn 2 sees turn 1.
	model.Push(fakellm.TextStep("Still here."))
	res2, stderr, code := u.chatJSON(2*time.Minute, "-q", "and now?", "--session", res.SessionID)
	if code != 0 || res2.TurnID != workflows.TurnWorkflowID(res.SessionID, 2) || len(res2.Messages) != 8 {
		t.Fatalf("second turn: exit %d, %+v\n%s", code, res2, stderr)
	}
}

// TestChatMaxIterations: a model that always calls a tool is stopped by the
// budget, then one tool-less call summarises.
func TestChatMaxIterations(t *testing.T) {
	t.Parallel()
	model := fakellm.New()
	defer model.Close()
	model.SetResponder(func(req fakellm.Request) fakellm.Step {
		if len(req.Body.Tools) == 0 {
			return fakellm.TextStep("Summary: I listed the directory three times.")
		}
		return fakellm.ToolStep(fakellm.ToolCall{Name: "terminal", Arguments: `{"command":"ls"}`})
	})
	u := newUser(t, model.URL())
	res, stderr, code := u.chatJSON(3*time.Minute, "-q", "loop forever", "--max-iterations", "3")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	if res.Completed || !res.Partial || res.TurnExitReason != workflows.StopMaxIterations || res.APICalls != 4 {
		t.Fatalf("result = %+v", res)
	}
	if res.FinalResponse == nil || !strings.HasPrefix(*res.FinalResponse, "Summary:") {
		t.Fatalf("final = %v", res.FinalResponse)
	}
	reqs := model.Requests()
	if len(reqs) != 4 || len(reqs[3].Body.Tools) != 0 {
		t.Fatalf("requests = %d, last offered %d tools", len(reqs), len(reqs[len(reqs)-1].Body.Tools))
	}
	lastMsg := reqs[3].Body.Messages[len(reqs[3].Body.Messages)-1]
	if lastMsg.Role != "user" || lastMsg.Content != workflows.SummaryRequest {
		t.Fatalf("summary request = %+v", lastMsg)
	}
	// The summary request is not persisted: only real messages are.
	for _, m := range res.Messages {
		if m.Content == workflows.SummaryRequest {
			t.Fatal("the summary request leaked into the transcript")
		}
	}
	assertPaired(t, res.Messages)
}
