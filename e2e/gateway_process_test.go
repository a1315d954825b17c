package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestTelegramNewKillsProcesses: a background process a chat's turn
// started outlives the turn, and is killed when the chat starts a new
// session with /new.
func TestTelegramNewKillsProcesses(t *testing.T) {
	t.Parallel()
	marker := fmt.Sprintf("reset-marker-%d", time.Now().UnixNano())
	server := "while true; do echo " + marker + "; sleep 0.2; done"
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "s1", Name: "process", Arguments: mustMarshal(t, map[string]string{"action": "start", "command": server})}),
		fakellm.TextStep("The server is running."),
	)
	defer model.Close()
	_, tg, _ := telegramServeConfig(t, model, "")
	running := func() bool {
		out, _ := exec.Command("pgrep", "-f", marker).Output()
		return len(out) > 0
	}

	tg.Send(42, 0, "start the server")
	waitText(t, tg, "The server is running.", time.Minute)
	time.Sleep(time.Second)
	if !running() {
		t.Fatal("the process did not outlive the turn that started it")
	}
	tg.Send(42, 0, "/new")
	waitText(t, tg, "New session: the conversation starts afresh.", 30*time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for running() {
		if time.Now().After(deadline) {
			t.Fatal("the chat's process still runs 20 s after /new")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestTelegramTaskApproval: a chat's turn delegates a task whose command
// needs approval; the chat shows the approval with its buttons, and the
// press reaches the task, which runs the command; the chat gets the answer.
func TestTelegramTaskApproval(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		task := taskOf(req)
		last, _ := req.LastMessage()
		switch {
		case task == "parent" && last.Role == "tool":
			return fakellm.TextStep("The stale directory is gone.")
		case task == "parent":
			return fakellm.ToolStep(fakellm.ToolCall{ID: "d1", Name: "delegate_task", Arguments: `{"tasks":[{"goal":"GOAL-ALPHA: remove ./stale"}]}`})
		case last.Role == "tool":
			return fakellm.TextStep("GOAL-ALPHA done")
		}
		return fakellm.ToolStep(fakellm.ToolCall{ID: "rm1", Name: "terminal", Arguments: `{"command":"rm -rf ./stale"}`})
	}))
	defer model.Close()
	u, tg, _ := telegramServe(t, model)
	stale := filepath.Join(config.Default(u.home).WorkspaceDir(), "stale")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	tg.Send(42, 0, "clean up the workspace")
	ask := waitText(t, tg, "rm -rf ./stale", time.Minute)
	if len(ask.Buttons) == 0 || ask.Buttons[0][0].Text != "Approve once" {
		t.Fatalf("the task's approval has no buttons: %+v", ask)
	}
	tg.Press(42, ask, ask.Buttons[0][0].Data)
	waitText(t, tg, "The stale directory is gone.", time.Minute)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the approved command did not run: %v", err)
	}
}
