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
	t.Parallel()
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
	// Only read_file: the other tools' schemas would fill the small window.
	writeConfig("compression:\n  context_window: 16000\n  keep_last: 4\ntools:\n  enabled: [read_file]\n")(t, u)
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

// TestCompactCommand: talaria compact compacts a session between turns
// through serve; the next turn goes on from the summary in the child.
func TestCompactCommand(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		msgs := req.Body.Messages
		if len(msgs) == 1 && strings.Contains(msgs[0].Content, "TRANSCRIPT TO SUMMARISE") {
			return fakellm.TextStep("[CONTEXT COMPACTION — REFERENCE ONLY]\n## Active Task\n- CLI-SUMMARY")
		}
		return fakellm.TextStep(fmt.Sprintf("%d messages", len(msgs)))
	}))
	defer model.Close()
	u := newUser(t, model.URL())
	writeConfig("compression:\n  keep_last: 2\n")(t, u)
	u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")

	out, stderr, code := u.run(time.Minute, "compact", "notyet")
	if code != 1 || !strings.Contains(stderr, "session notyet has no conversation") {
		t.Fatalf("compact of an unknown session: exit %d\n%s%s", code, out, stderr)
	}
	for _, q := range []string{"one", "two", "three", "four"} {
		if _, stderr, code := u.run(time.Minute, "chat", "-q", q, "--session", "cli"); code != 0 {
			t.Fatalf("chat -q %s: exit %d\n%s", q, code, stderr)
		}
	}
	out, stderr, code = u.run(2*time.Minute, "compact", "cli")
	if code != 0 || !strings.Contains(out, "Compacted: ~") || !strings.Contains(out, "goes on in session cli~1") ||
		!strings.Contains(stderr, "compacting session cli") {
		t.Fatalf("compact cli: exit %d\n%s%s", code, out, stderr)
	}
	res, stderr, code := u.chatJSON(time.Minute, "-q", "five", "--session", "cli")
	if code != 0 || res.ActiveSessionID != "cli~1" || len(res.Messages) == 0 {
		t.Fatalf("the turn after compact: exit %d %+v\n%s", code, res, stderr)
	}
	var summary bool
	for _, m := range res.Messages {
		summary = summary || strings.Contains(m.Content, "CLI-SUMMARY")
		if m.Content == "three" { // "two" is in the head: keep_first 3
			t.Errorf("the middle (%q) is still in the conversation", m.Content)
		}
	}
	if !summary {
		t.Errorf("the conversation after compact holds no summary: %+v", res.Messages)
	}
}
