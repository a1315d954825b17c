package e2e

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestConfigStrictThroughTheBinary: a misspelt key in config.yaml stops a
// command with one line naming the file, the line and the key (exit 2);
// `talaria config` on a fresh home prints and creates nothing; a flag
// given empty clears the file's value.
func TestConfigStrictThroughTheBinary(t *testing.T) {
	t.Parallel()
	fresh := newUser(t, "http://127.0.0.1:1/v1")
	out, stderr, code := fresh.run(time.Minute, "config")
	if code != 0 || !strings.Contains(out, "max_iterations: 90") {
		t.Fatalf("config on a fresh home: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, err := os.Stat(fresh.home); !os.IsNotExist(err) {
		t.Fatalf("talaria config created TALARIA_HOME %s (stat: %v)", fresh.home, err)
	}

	u := newUser(t, "http://127.0.0.1:1/v1")
	writeConfig("temporal:\n  address: file.example:7233\nmodel:\n  name: x\n  max_token: 10\n")(t, u)
	for _, args := range [][]string{{"config"}, {"chat", "-q", "hi"}} {
		_, stderr, code := u.run(time.Minute, args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		want := `config.yaml:5: unknown key "max_token" in model (did you mean "max_tokens"?)`
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], u.home) || !strings.Contains(lines[0], want) {
			t.Fatalf("%v: exit %d, want 2 and one line with %q:\n%s", args, code, want, stderr)
		}
	}

	writeConfig("temporal:\n  address: file.example:7233\n")(t, u)
	out, stderr, code = u.run(time.Minute, "config", "--temporal-address", "")
	if code != 0 || !strings.Contains(out, "address: \"\"") {
		t.Fatalf("an empty --temporal-address must clear the file's: exit %d\n%s\n%s", code, out, stderr)
	}
}
