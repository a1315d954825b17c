package e2e

import (
	"strings"
	"testing"
	"time"
)

// cronDelivering adds the job name delivering to target, checks that a
// malformed target of the same kind is refused with hint, and runs the
// job now.
func cronDelivering(t *testing.T, u *user, name, target, bad, hint string) {
	t.Helper()
	if out, stderr, code := u.run(time.Minute, "cron", "add", "--name", name, "--schedule", "@daily",
		"--prompt", "summarise the overnight alerts", "--deliver", target); code != 0 {
		t.Fatalf("cron add: %d %s%s", code, out, stderr)
	}
	if _, stderr, code := u.run(time.Minute, "cron", "add", "--name", "bad", "--schedule", "@daily",
		"--prompt", "x", "--deliver", bad); code != 2 || !strings.Contains(stderr, hint) {
		t.Errorf("the target %q: exit %d: %s", bad, code, stderr)
	}
	if out, stderr, code := u.run(time.Minute, "cron", "run-now", name); code != 0 {
		t.Fatalf("run-now: %d %s%s", code, out, stderr)
	}
}

// waitRunDelivered waits until the job's runs show a delivery to target.
func waitRunDelivered(t *testing.T, u *user, name, target string) {
	t.Helper()
	var runs string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if runs, _, _ = u.run(time.Minute, "cron", "runs", name); strings.Contains(runs, target) {
			return
		}
	}
	t.Errorf("cron runs does not show the delivery to %s:\n%s", target, runs)
}
