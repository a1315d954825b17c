package e2e

import (
	"encoding/json"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// TestVersionOfBuiltBinary: the built binary's --version and version -o json
// exit 0, name the Temporal server and SDK versions it was built with (the
// same module versions this test package links), print nothing on stderr and
// create nothing in TALARIA_HOME.
func TestVersionOfBuiltBinary(t *testing.T) {
	t.Parallel()
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build info in the test binary")
	}
	want := map[string]string{}
	for _, m := range bi.Deps {
		if m.Path == "go.temporal.io/server" || m.Path == "go.temporal.io/sdk" {
			want[m.Path] = m.Version
		}
	}
	if want["go.temporal.io/server"] == "" || want["go.temporal.io/sdk"] == "" {
		t.Fatalf("the test binary does not link the Temporal modules: %v", want)
	}

	u := newUser(t, "http://127.0.0.1:1/v1")
	stdout, stderr, code := u.run(30*time.Second, "--version")
	if code != 0 || stderr != "" {
		t.Fatalf("talaria --version: exit %d, stderr %q", code, stderr)
	}
	for _, line := range []string{"talaria version ", "temporal server  " + want["go.temporal.io/server"] + "\n",
		"temporal sdk     " + want["go.temporal.io/sdk"] + "\n", "go               " + bi.GoVersion} {
		if !strings.Contains(stdout, line) {
			t.Errorf("talaria --version lacks %q:\n%s", line, stdout)
		}
	}

	stdout, stderr, code = u.run(30*time.Second, "version", "-o", "json")
	if code != 0 || stderr != "" {
		t.Fatalf("talaria version -o json: exit %d, stderr %q", code, stderr)
	}
	var v struct {
		Version        string `json:"version"`
		Commit         string `json:"commit"`
		TemporalServer string `json:"temporal_server"`
		TemporalSDK    string `json:"temporal_sdk"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("version -o json: %v\n%s", err, stdout)
	}
	if v.TemporalServer != want["go.temporal.io/server"] || v.TemporalSDK != want["go.temporal.io/sdk"] || v.Version == "" || v.Commit == "" {
		t.Fatalf("version -o json = %+v, want Temporal %v", v, want)
	}

	if _, stderr, code := u.run(30*time.Second, "version", "-o", "yaml"); code != 2 || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("version -o yaml: exit %d, stderr %q; want exit 2 and one line", code, stderr)
	}
	if _, err := os.Stat(u.home); !os.IsNotExist(err) {
		t.Fatalf("talaria version touched TALARIA_HOME %s: %v", u.home, err)
	}
}
