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

// TestACPCancelLeavesOtherTurns: cancel in the editor stops only the
// editor's own prompt. A terminal's turn runs in the session while the
// editor's prompt waits behind it (busy_input_mode queue) or steers it
// (steer): the cancelled prompt answers "cancelled" at once, while the
// terminal's turn still runs; a queued prompt is taken out of the queue
// and never reaches the model; the terminal's turn goes on to its answer.
// A prompt cancelled right after it was sent answers "cancelled" too; a
// stray cancel after a refused prompt cancels nothing.
func TestACPCancelLeavesOtherTurns(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		switch {
		case strings.Contains(last.Content, "a slow task"):
			// It waits for the test's go-ahead, a file named in the task.
			name := strings.Fields(last.Content)[3]
			return fakellm.ToolStep(fakellm.ToolCall{ID: "sl", Name: "terminal",
				Arguments: `{"command":"while [ ! -f ` + name + ` ]; do sleep 0.1; done; echo done > ` + name + `.done"}`})
		case last.Role == "tool":
			return fakellm.TextStep("slow task done")
		}
		return fakellm.TextStep("answer to " + last.Content)
	}))
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	for _, mode := range []string{"queue", "steer"} {
		u.env["TALARIA_BUSY_INPUT_MODE"] = mode
		r := startACPRaw(t, u)
		r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
		r.reply(t, 1.0)
		r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"`+u.workdir+`","mcpServers":[]}}`)
		sid, _ := field(r.reply(t, 2.0), "result", "sessionId").(string)
		if sid == "" {
			t.Fatal("no session id")
		}
		asked := len(model.Requests())
		gate := "go-" + mode
		chat := u.background(ctx, "chat", "-q", "a slow task "+gate, "--session", sid)
		if err := model.WaitRequests(ctx, asked+1); err != nil {
			t.Fatal(err)
		}
		r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"the editor's `+mode+`d prompt"}]}}`)
		if mode == "queue" {
			u.waitStatus(sid, "queued 1: the editor's queued prompt")
		} else {
			u.waitStatus(sid, "steer")
		}
		r.send(t, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"`+sid+`"}}`)
		if res := r.reply(t, 3.0); field(res, "result", "stopReason") != "cancelled" {
			t.Fatalf("%s: the cancelled prompt: %v", mode, res)
		}
		// The terminal's turn still waits for its go-ahead.
		if err := os.WriteFile(filepath.Join(u.workdir, gate), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := chat()
		if code != 0 || !strings.Contains(out, "slow task done") {
			t.Fatalf("%s: the terminal's turn (exit %d):\n%s%s", mode, code, out, errOut)
		}
		if _, err := os.Stat(filepath.Join(u.workdir, gate+".done")); err != nil {
			t.Fatalf("%s: the terminal's command was cut: %v", mode, err)
		}
		if mode == "queue" {
			if status := u.waitStatus(sid, "idle"); strings.Contains(status, "queued") {
				t.Fatalf("the withdrawn prompt is still queued:\n%s", status)
			}
			for _, req := range model.Requests() {
				if last, _ := req.LastMessage(); strings.Contains(last.Content, "queued prompt") {
					t.Fatal("the withdrawn prompt reached the model")
				}
			}
		}

		// A prompt and its cancel, back to back.
		r.send(t, `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"never mind"}]}}`+"\n"+
			`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"`+sid+`"}}`)
		if res := r.reply(t, 4.0); field(res, "result", "stopReason") != "cancelled" {
			t.Fatalf("%s: the prompt cancelled at once: %v", mode, res)
		}
		// A prompt the agent refuses, then a stray cancel: the next prompt
		// runs.
		r.send(t, `{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"`+sid+`"}}`)
		wantError(t, r.reply(t, 5.0), -32602, "prompt")
		r.send(t, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"`+sid+`"}}`)
		r.send(t, `{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"hello there"}]}}`)
		if res := r.reply(t, 6.0); field(res, "result", "stopReason") != "end_turn" {
			t.Fatalf("%s: the prompt after a stray cancel: %v", mode, res)
		}
	}
}
