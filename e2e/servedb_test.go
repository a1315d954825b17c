package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestServeDatabaseNotOverridden: while serve runs on a home, a command
// that names another database (--db or TALARIA_DB) is refused in one
// line, and does not touch serve's: a session removed "there" stays. The
// database serve uses, or none named, works through serve as before.
func TestServeDatabaseNotOverridden(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("hello"))
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(freePort(t))
	if _, errOut, code := u.run(2*time.Minute, "chat", "-q", "hi", "--session", "keep1"); code != 0 {
		t.Fatalf("chat: exit %d: %s", code, errOut)
	}
	other := filepath.Join(t.TempDir(), "other.db")
	_, errOut, code := u.run(time.Minute, "--db", other, "sessions", "rm", "keep1")
	if code != 2 || !strings.Contains(errOut, "uses the database") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("sessions rm with another --db: exit %d: %q, want a one-line refusal", code, errOut)
	}
	u.env["TALARIA_DB"] = other
	if _, errOut, code := u.run(time.Minute, "sessions", "list"); code != 2 || !strings.Contains(errOut, "uses the database") {
		t.Fatalf("sessions list with another TALARIA_DB: exit %d: %q", code, errOut)
	}
	delete(u.env, "TALARIA_DB")
	if _, err := os.Stat(other); err == nil {
		t.Error("the other database was created")
	}
	out, errOut, code := u.run(time.Minute, "--db", filepath.Join(u.home, "talaria.db"), "sessions", "list")
	if code != 0 || !strings.Contains(out, "keep1") {
		t.Fatalf("sessions list with serve's own --db: exit %d: %s %s", code, out, errOut)
	}
}
