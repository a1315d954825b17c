package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestStatusOfKnownAndUnknownSessions: status of a session that finished
// its turn says idle (exit 0); status of a session nobody ever used is an
// error naming it (exit 1), not "idle".
func TestStatusOfKnownAndUnknownSessions(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("done"))
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	if _, stderr, code := u.run(2*time.Minute, "chat", "-q", "hello", "--session", "known"); code != 0 {
		t.Fatalf("chat exit %d: %s", code, stderr)
	}
	out, stderr, code := u.run(time.Minute, "status", "known")
	if code != 0 || !strings.Contains(out, "session known: idle") {
		t.Fatalf("status known: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = u.run(time.Minute, "status", "NOPE")
	if code != 1 || !strings.Contains(stderr, `no session "NOPE"`) || strings.Contains(out, "idle") {
		t.Fatalf("status NOPE: exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	if lines := strings.Count(strings.TrimSpace(stderr), "\n"); lines != 0 {
		t.Fatalf("status NOPE: want one line on stderr, got:\n%s", stderr)
	}
}
