package e2e

import (
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestTelegramNewKillsProcesses: a background process a chat's turn
// started outlives the turn, and is killed when the chat starts a new
// session with /new.
func TestTelegramNewKillsProcesses(t *testing.T) {
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
