package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestACPCancelWhileQueued: with busy_input_mode queue, an editor's prompt
// waits behind another door's turn in the same session; cancelling it
// stops only the editor's prompt (it answers "cancelled"), and the other
// door's turn goes on to its answer.
func TestACPCancelWhileQueued(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		switch {
		case strings.Contains(last.Content, "a slow task"):
			return fakellm.ToolStep(fakellm.ToolCall{ID: "sl", Name: "terminal", Arguments: `{"command":"sleep 6; echo slept > slept.txt"}`})
		case last.Role == "tool":
			return fakellm.TextStep("slow task done")
		}
		return fakellm.TextStep("answer to " + last.Content)
	}))
	defer model.Close()
	u := newUser(t, model.URL())
	u.env["TALARIA_BUSY_INPUT_MODE"] = "queue"
	u.serve(0)
	r := startACPRaw(t, u)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	r.reply(t, 1.0)
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"`+u.workdir+`","mcpServers":[]}}`)
	sid, _ := field(r.reply(t, 2.0), "result", "sessionId").(string)
	if sid == "" {
		t.Fatal("no session id")
	}

	// The terminal's turn runs in the editor's session.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	chat := u.background(ctx, "chat", "-q", "a slow task", "--session", sid)
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"a quick one"}]}}`)
	u.waitStatus(sid, "queued 1: a quick one")
	r.send(t, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"`+sid+`"}}`)
	if res := r.reply(t, 3.0); field(res, "result", "stopReason") != "cancelled" {
		t.Fatalf("the cancelled prompt: %v", res)
	}
	out, errOut, code := chat()
	if code != 0 || !strings.Contains(out, "slow task done") {
		t.Fatalf("the terminal's turn (exit %d):\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(u.workdir, "slept.txt")); err != nil {
		t.Fatalf("the terminal's command was cut: %v", err)
	}
}
