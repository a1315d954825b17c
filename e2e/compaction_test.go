package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestChatCompactsALongConversation: with a small context window in
// config.yaml, a long task is compacted through the real binary; the
// conversation goes on in the child session, which the sessions commands
// show linked to its parent, and naming the child continues the same
// conversation.
func TestChatCompactsALongConversation(t *testing.T) {
	const task = "E2E-TASK: read the ten big files one by one"
	const reads = 10
	var mu sync.Mutex
	done := 0
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		mu.Lock()
		defer mu.Unlock()
		msgs := req.Body.Messages
		if len(msgs) == 1 && strings.Contains(msgs[0].Content, "TRANSCRIPT TO SUMMARISE") {
			return fakellm.TextStep("[CONTEXT COMPACTION — REFERENCE ONLY]\n## Active Task\n- " + task)
		}
		if last := msgs[len(msgs)-1]; last.Role == "user" && last.Content == "and now?" {
			return fakellm.TextStep("still here")
		}
		if done < reads {
			done++
			return fakellm.ToolStep(fakellm.ToolCall{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"big-%d.txt"}`, done)})
		}
		return fakellm.TextStep("all read")
	}))
	defer model.Close()
	u := newUser(t, model.URL())
	writeConfig("compression:\n  context_window: 16000\n  keep_last: 4\n")(t, u)
	for i := 1; i <= reads; i++ {
		text := strings.Repeat(fmt.Sprintf("file %d: %s\n", i, strings.Repeat("abcdefgh", 9)), 40)
		if err := os.WriteFile(filepath.Join(u.workdir, fmt.Sprintf("big-%d.txt", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	res, stderr, code := u.chatJSON(3*time.Minute, "-q", task, "--session", "long")
	if code != 0 || !res.Completed || res.FinalResponse == nil || *res.FinalResponse != "all read" {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	if res.Compactions < 1 || res.SessionID != "long" || !strings.HasPrefix(res.ActiveSessionID, "long~") {
		t.Fatalf("compactions %d, session %s, active %s", res.Compactions, res.SessionID, res.ActiveSessionID)
	}
	if len(res.Messages) == 0 || res.Messages[0].Content != task {
		t.Fatalf("the compacted conversation does not start with the task: %+v", res.Messages[:1])
	}
	assertPaired(t, res.Messages)

	out, _, code := u.run(time.Minute, "sessions", "show", res.ActiveSessionID)
	if code != 0 || !strings.Contains(out, "compacted from long") || !strings.Contains(out, "[CONTEXT COMPACTION — REFERENCE ONLY]") {
		t.Fatalf("sessions show %s: exit %d\n%s", res.ActiveSessionID, code, out)
	}
	out, _, code = u.run(time.Minute, "sessions", "list")
	if code != 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), "long~1 long ") {
		t.Fatalf("sessions list does not show long~1's parent:\n%s", out)
	}

	// Naming the child continues the same conversation.
	next, stderr, code := u.chatJSON(time.Minute, "-q", "and now?", "--resume", res.ActiveSessionID)
	if code != 0 || next.SessionID != "long" || next.ActiveSessionID != res.ActiveSessionID || *next.FinalResponse != "still here" {
		t.Fatalf("--resume %s: exit %d %+v\n%s", res.ActiveSessionID, code, next, stderr)
	}
}
