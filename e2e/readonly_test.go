package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadOnlyCommandsCreateNothing: every command that only reads, run on
// a TALARIA_HOME that does not exist, leaves it not existing and says in
// one line that there is nothing yet (exit 0 for a listing, 1 for a
// look-up); the global flags are accepted before and after each.
func TestReadOnlyCommandsCreateNothing(t *testing.T) {
	t.Parallel()
	u := newUser(t, "http://127.0.0.1:9/v1")
	cases := []struct {
		args []string
		code int
		says string
	}{
		{[]string{"config"}, 0, ""},
		{[]string{"--log-level", "debug", "config", "--db", ""}, 0, ""},
		{[]string{"version"}, 0, ""},
		{[]string{"--namespace", "other", "version"}, 0, ""},
		{[]string{"status", "s1"}, 1, "does not exist"},
		{[]string{"sessions", "list"}, 0, "does not exist"},
		{[]string{"sessions", "list", "--json", "--log-level", "error"}, 0, "does not exist"},
		{[]string{"sessions", "show", "s1"}, 1, "does not exist"},
		{[]string{"sessions", "search", "finished plan"}, 0, "does not exist"},
		{[]string{"cron", "list"}, 0, "does not exist"},
		{[]string{"cron", "show", "j"}, 1, "does not exist"},
		{[]string{"cron", "runs", "j"}, 1, "does not exist"},
		{[]string{"cron", "output", "j"}, 1, "does not exist"},
		{[]string{"model", "show"}, 0, ""},
		{[]string{"memory", "show"}, 0, "does not exist"},
		{[]string{"usage", "--since", "7d"}, 0, "does not exist"},
		{[]string{"logs"}, 1, "no logs yet"},
		{[]string{"logs", "-f", "--file", "serve"}, 1, "no logs yet"},
	}
	for _, c := range cases {
		out, stderr, code := u.run(time.Minute, c.args...)
		if code != c.code {
			t.Errorf("talaria %v: exit %d, want %d\n%s%s", c.args, code, c.code, out, stderr)
		}
		if c.says != "" {
			if !strings.Contains(stderr, c.says) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("talaria %v: stderr %q, want one line saying %q", c.args, stderr, c.says)
			}
		}
		if _, err := os.Stat(u.home); !os.IsNotExist(err) {
			t.Fatalf("talaria %v created TALARIA_HOME %s (stat: %v)", c.args, u.home, err)
		}
	}
}

// emptyUsage is usage -o json with nothing recorded.
const emptyUsage = `{"models":[],"total":{"provider":"all","model":"all","calls":0,"prompt_tokens":0,` +
	`"completion_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0,"cost_usd":0,"unpriced_calls":0}}`

// TestReadOnlyCommandsAfterModelSet: a home made by 'model set' has no
// database yet; listings say so, print an empty JSON list when asked for
// JSON, look-ups exit 1, and none of them creates the database.
func TestReadOnlyCommandsAfterModelSet(t *testing.T) {
	t.Parallel()
	u := newUser(t, "http://127.0.0.1:9/v1")
	if _, stderr, code := u.run(time.Minute, "model", "set", "--base-url", "http://127.0.0.1:9/v1", "--model", "m1"); code != 0 {
		t.Fatalf("model set: exit %d\n%s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"sessions", "list"}, 0, ""},
		{[]string{"sessions", "list", "-o", "json"}, 0, "[]"},
		{[]string{"cron", "list", "--json"}, 0, "[]"},
		{[]string{"sessions", "search", "plan", "-o", "json"}, 0, "[]"},
		{[]string{"sessions", "show", "s1"}, 1, ""},
		{[]string{"cron", "show", "j"}, 1, ""},
		{[]string{"usage", "-o", "json"}, 0, emptyUsage},
	} {
		out, stderr, code := u.run(time.Minute, c.args...)
		if code != c.code || strings.TrimSpace(out) != c.out || !strings.Contains(stderr, "no database at") {
			t.Errorf("talaria %v: exit %d, stdout %q, stderr %q", c.args, code, out, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(u.home, "talaria.db")); !os.IsNotExist(err) {
		t.Fatalf("a read-only command created the database (stat: %v)", err)
	}
}

// TestGlobalFlagsBeforeAndAfter: a global flag works before the command
// and after it, and one given empty clears what the environment set.
func TestGlobalFlagsBeforeAndAfter(t *testing.T) {
	t.Parallel()
	u := newUser(t, "http://127.0.0.1:9/v1")
	u.env["TEMPORAL_ADDRESS"] = "env.example:7233"
	for _, args := range [][]string{
		{"--temporal-address", "flag.example:7233", "config"},
		{"config", "--temporal-address", "flag.example:7233"},
	} {
		out, stderr, code := u.run(time.Minute, args...)
		if code != 0 || !strings.Contains(out, "address: flag.example:7233") {
			t.Fatalf("talaria %v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	out, stderr, code := u.run(time.Minute, "config", "--temporal-address", "")
	if code != 0 || strings.Contains(out, "env.example") {
		t.Fatalf("an empty --temporal-address did not clear the environment's: exit %d\n%s%s", code, out, stderr)
	}
	// Temporal's standard TLS variable and its old alias must agree.
	u.env["TEMPORAL_TLS_CA"] = "/a.pem"
	u.env["TEMPORAL_TLS_SERVER_CA_CERT_PATH"] = "/b.pem"
	_, stderr, code = u.run(time.Minute, "config")
	if code != 2 || !strings.Contains(stderr, "TEMPORAL_TLS_CA") || !strings.Contains(stderr, "TEMPORAL_TLS_SERVER_CA_CERT_PATH") ||
		strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Fatalf("differing old and standard names: exit %d, stderr %q", code, stderr)
	}
}
