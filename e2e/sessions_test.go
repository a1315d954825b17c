package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestSessionsCommands: sessions can be listed, shown, continued, resumed
// and removed.
func TestSessionsCommands(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("first answer"), fakellm.TextStep("second answer"), fakellm.TextStep("third answer"))
	defer model.Close()
	u := newUser(t, model.URL())
	if _, stderr, code := u.chatJSON(time.Minute, "-q", "remember the number 42", "--session", "alpha"); code != 0 {
		t.Fatalf("first chat: %s", stderr)
	}
	// --continue picks the most recent session.
	res, stderr, code := u.chatJSON(time.Minute, "-q", "what number?", "--continue")
	if code != 0 || res.SessionID != "alpha" || len(res.Messages) != 4 {
		t.Fatalf("--continue: exit %d session %s messages %d\n%s", code, res.SessionID, len(res.Messages), stderr)
	}
	res, _, code = u.chatJSON(time.Minute, "-q", "again", "--resume", "alpha")
	if code != 0 || res.SessionID != "alpha" || len(res.Messages) != 6 {
		t.Fatalf("--resume: exit %d %+v", code, res)
	}
	if _, stderr, code := u.run(time.Minute, "chat", "-q", "x", "--resume", "nope"); code != 2 || !strings.Contains(stderr, "no such session") {
		t.Fatalf("--resume of a missing session: exit %d %s", code, stderr)
	}
	out, _, code := u.run(time.Minute, "sessions", "list")
	if code != 0 || !strings.Contains(out, "alpha") || !strings.Contains(out, "remember the number 42") {
		t.Fatalf("sessions list: exit %d\n%s", code, out)
	}
	out, _, code = u.run(time.Minute, "sessions", "show", "alpha")
	if code != 0 || !strings.Contains(out, "turn 3: completed (text_response)") || !strings.Contains(out, "assistant: second answer") {
		t.Fatalf("sessions show: exit %d\n%s", code, out)
	}
	if _, _, code := u.run(time.Minute, "sessions", "rm", "alpha"); code != 0 {
		t.Fatal("sessions rm failed")
	}
	if _, stderr, code := u.run(time.Minute, "sessions", "show", "alpha"); code != 1 || !strings.Contains(stderr, "no session") {
		t.Fatalf("show after rm: exit %d %s", code, stderr)
	}
}

// TestConfigCommand: the effective configuration, with secrets masked.
func TestConfigCommand(t *testing.T) {
	t.Parallel()
	u := newUser(t, "http://127.0.0.1:1/v1")
	u.env["OPENAI_API_KEY"] = "sk-very-secret"
	u.env["TALARIA_MAX_ITERATIONS"] = "12"
	out, stderr, code := u.run(time.Minute, "config", "--db", "postgres://me:hunter2@db.local/talaria")
	if code != 0 {
		t.Fatalf("exit %d %s", code, stderr)
	}
	for _, want := range []string{"max_iterations: 12", "base_url: http://127.0.0.1:1/v1", "api_key: '********'", "me:xxxxx@db.local"} {
		if !strings.Contains(out, want) {
			t.Fatalf("config output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sk-very-secret") || strings.Contains(out, "hunter2") {
		t.Fatalf("a secret leaked:\n%s", out)
	}
}

// TestMemoryCommands: memory show lists the entries with sizes; memory edit
// runs $EDITOR on the file.
func TestMemoryCommands(t *testing.T) {
	t.Parallel()
	u := newUser(t, "http://127.0.0.1:1/v1")
	script := u.workdir + "/fake-editor.sh"
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf 'likes tea\\n§\\nworks at night\\n' > \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	u.env["EDITOR"] = script
	if _, stderr, code := u.run(time.Minute, "memory", "edit", "--user"); code != 0 {
		t.Fatalf("memory edit: exit %d %s", code, stderr)
	}
	out, _, code := u.run(time.Minute, "memory", "show")
	if code != 0 || !strings.Contains(out, "About the user") || !strings.Contains(out, "2 entries") ||
		!strings.Contains(out, "- likes tea") || !strings.Contains(out, "/1375 characters") {
		t.Fatalf("memory show: exit %d\n%s", code, out)
	}
}
