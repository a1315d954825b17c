package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestDoctor: on a fresh machine doctor says what is missing and how to
// fix it, creating nothing, and fails on the unreachable endpoint; with a
// serve running against a working endpoint every check passes.
func TestDoctor(t *testing.T) {
	t.Parallel()
	u := newUser(t, "http://127.0.0.1:9/v1")
	out, stderr, code := u.run(time.Minute, "doctor")
	if code != 1 {
		t.Fatalf("doctor on a fresh home: exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []string{"✓ config:", "! home:", "does not exist yet", "! store:", "! temporal: no talaria serve",
		"✗ model: model endpoint http://127.0.0.1:9/v1 is unreachable", "talaria model set", "disk:", "✓ sandbox: sandbox workspace-write (bubblewrap)"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(u.home); !os.IsNotExist(err) {
		t.Fatalf("doctor created TALARIA_HOME (stat: %v)", err)
	}

	model := fakellm.New()
	defer model.Close()
	u.env["OPENAI_BASE_URL"] = model.URL()
	u.serve(0)
	out, stderr, code = u.run(time.Minute, "doctor", "-o", "json")
	var checks []struct{ Name, Status, Detail, Fix string }
	if err := json.Unmarshal([]byte(out), &checks); err != nil || code != 0 {
		t.Fatalf("doctor -o json with serve: exit %d, %v\n%s%s", code, err, out, stderr)
	}
	var names []string
	for _, c := range checks {
		names = append(names, c.Name)
		if c.Status != "ok" {
			t.Errorf("with serve running, %s is %s: %s (%s)", c.Name, c.Status, c.Detail, c.Fix)
		}
	}
	if strings.Join(names, ",") != "config,home,store,temporal,model,disk,sandbox" {
		t.Fatalf("checks %v", names)
	}
}
