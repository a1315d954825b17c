package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestNoSandboxRefusesCommands: on a machine where no sandbox can be made
// (here: bubblewrap is not where the configuration says), serve says why
// in one line at start, doctor warns, and a terminal command is refused
// with that reason; with sandbox.mode: off the same command runs
// unconfined (it lists Talaria's home, which a sandbox hides), and serve
// and doctor say so.
func TestNoSandboxRefusesCommands(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode, line, result string
	}{
		{"workspace-write", "talaria serve: commands are refused: no sandbox can be made: bubblewrap (/nonexistent/bwrap) is not installed", "refused: no sandbox can be made"},
		{"off", "talaria serve: sandbox off: commands run unconfined", "config.yaml"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			model := fakellm.New()
			defer model.Close()
			u := newUser(t, model.URL())
			model.Push(fakellm.ToolStep(fakellm.ToolCall{ID: "t1", Name: "terminal", Arguments: jsonObject(t, map[string]any{"command": "ls " + u.home})}),
				fakellm.TextStep("done"))
			if err := os.MkdirAll(u.home, 0o700); err != nil {
				t.Fatal(err)
			}
			cfg := "sandbox:\n  mode: " + tc.mode + "\n  bwrap: /nonexistent/bwrap\n"
			if err := os.WriteFile(filepath.Join(u.home, "config.yaml"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			s := u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")
			defer s.kill()
			var line string
			for _, l := range strings.Split(s.stderr.String(), "\n") {
				if strings.Contains(l, "sandbox") {
					line = l
				}
			}
			if !strings.HasPrefix(line, tc.line) {
				t.Errorf("serve's sandbox line %q, want it to start %q\n%s", line, tc.line, s.stderr.String())
			}
			doctor, _, _ := u.run(time.Minute, "doctor")
			if !strings.Contains(doctor, "! sandbox: ") {
				t.Errorf("doctor does not warn about the sandbox:\n%s", doctor)
			}
			res, stderr, code := u.chatJSON(2*time.Minute, "-q", "list the home")
			if code != 0 || !res.Completed {
				t.Fatalf("chat: exit %d %+v\n%s", code, res, stderr)
			}
			var result string
			for _, r := range model.Requests() {
				for _, m := range r.Body.Messages {
					if m.Role == "tool" && m.ToolCallID == "t1" {
						result = m.Content
					}
				}
			}
			if !strings.Contains(result, tc.result) {
				t.Errorf("the command's result %q, want %q", result, tc.result)
			}
		})
	}
}
