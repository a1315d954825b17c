package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestEscapesPrintedVisible: a model's answer with escape sequences (a
// clipboard write, a screen clear) and a message that carries them reach
// the terminal as visible text, never as control characters it obeys:
// from `chat -q` as it streams, and from `sessions show` later.
func TestEscapesPrintedVisible(t *testing.T) {
	t.Parallel()
	const answer = "hi \x1b]52;c;cHduZWQ=\x07 there\x1b[2J\r\n\u009b31m done"
	model := fakellm.New(fakellm.TextStep(answer))
	defer model.Close()
	u := newUser(t, model.URL())
	for _, args := range [][]string{
		{"chat", "-q", "say \x1b[31mhi", "--session", "esc1"},
		{"sessions", "show", "esc1"},
	} {
		out, errOut, code := u.run(2*time.Minute, args...)
		if code != 0 {
			t.Fatalf("talaria %s: exit %d: %s", args[0], code, errOut)
		}
		for _, b := range []string{"\x1b", "\x07", "\r", "\u009b"} {
			if strings.Contains(out+errOut, b) {
				t.Errorf("talaria %s printed a raw %q: %q", args[0], b, out)
			}
		}
		if !strings.Contains(out, `hi \x1b]52;c;cHduZWQ=\x07 there\x1b[2J`) || !strings.Contains(out, `\u009b31m done`) {
			t.Errorf("talaria %s: the answer is not shown whole: %q", args[0], out)
		}
	}
}
