package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// duplicateKeyArgs names "command" twice: an approval reading one key and a
// tool reading the other would disagree on what runs.
const duplicateKeyArgs = `{"command":"rm -rf ./victim","Command":"ls"}`

// invalidArgsSteps are the replies of a model that keeps sending the
// duplicate-key call: the loop re-asks silently a few times (loop
// invalid_json_retries, 3 by default), then answers it with an error.
func invalidArgsSteps(id string) []fakellm.Step {
	steps := make([]fakellm.Step, 4)
	for i := range steps {
		steps[i] = fakellm.ToolStep(fakellm.ToolCall{ID: id, Name: "terminal", Arguments: duplicateKeyArgs})
	}
	return steps
}

// toolResults are the tool results the model read in its last request, by
// call id.
func toolResults(model *fakellm.Server) map[string]string {
	reqs := model.Requests()
	out := map[string]string{}
	for _, r := range reqs {
		for _, m := range r.Body.Messages {
			if m.Role == "tool" {
				out[m.ToolCallID] = m.Content
			}
		}
	}
	return out
}

// makeVictim creates ./victim with a file inside.
func makeVictim(t *testing.T, u *user) string {
	t.Helper()
	victim := filepath.Join(u.workdir, "victim")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(victim, "data.txt"), []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	return victim
}

func assertVictimKept(t *testing.T, victim string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(victim, "data.txt")); err != nil || string(b) != "keep me" {
		t.Fatalf("./victim was touched: %q, %v", b, err)
	}
}

// markedProcesses lists live processes whose environment holds entry.
func markedProcesses(entry string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' {
			continue
		}
		environ, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(environ, []byte{0}) {
			if string(kv) == entry {
				cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
				out = append(out, e.Name()+":"+strings.ReplaceAll(string(cmdline), "\x00", " "))
			}
		}
	}
	return out
}

// TestToolSafetyApprovalsOff: with approvals off, nothing asks before a
// tool runs, so the tools' own limits are all that stands: the model key
// is not in the terminal's environment, write_file refuses every path
// outside the working directory, detached processes die with their
// command, and a call naming "command" twice never runs.
func TestToolSafetyApprovalsOff(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	escapes := map[string]string{
		"w1": "../escape.txt",
		"w2": filepath.Join(outside, "absolute.txt"),
		"w3": "link/through-link.txt",
		"w4": "/etc/talaria-e2e-" + strconv.Itoa(os.Getpid()),
	}
	var writes []fakellm.ToolCall
	for _, id := range []string{"w1", "w2", "w3", "w4"} {
		writes = append(writes, fakellm.ToolCall{ID: id, Name: "write_file", Arguments: args(t, map[string]string{"path": escapes[id], "content": "escaped"})})
	}
	steps := invalidArgsSteps("dup")
	steps = append(steps,
		fakellm.ToolStep(fakellm.ToolCall{ID: "key", Name: "terminal", Arguments: args(t, map[string]string{"command": `echo "$OPENAI_API_KEY" > k.txt; env > env.txt`})}),
		fakellm.ToolStep(writes...),
		fakellm.ToolStep(fakellm.ToolCall{ID: "setsid", Name: "terminal", Arguments: args(t, map[string]string{"command": `setsid sleep 1000 & echo "started $TALARIA_CMD_ID"`})}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "nohup", Name: "terminal", Arguments: args(t, map[string]string{"command": `nohup sh -c 'sleep 1000' >/dev/null 2>&1 & echo "started $TALARIA_CMD_ID"`})}),
		fakellm.TextStep("Done."),
	)
	model := fakellm.New(fakellm.WithSteps(steps...))
	defer model.Close()
	u := newUser(t, model.URL())
	u.env["OPENAI_API_KEY"] = "sk-e2e-secret-model-key"
	u.env["TALARIA_DB"] = filepath.Join(u.home, "talaria.db")
	u.env["GOFLAGS"] = "-buildvcs=false"
	writeConfig("approvals:\n  mode: off\nterminal:\n  env_passthrough: [GOFLAGS, OPENAI_API_KEY]\n")(t, u)
	victim := makeVictim(t, u)
	if err := os.Symlink(outside, filepath.Join(u.workdir, "link")); err != nil {
		t.Fatal(err)
	}

	res, stderr, code := u.chatJSON(4*time.Minute, "-q", "try everything")
	if code != 0 || !res.Completed {
		t.Fatalf("chat: exit %d, result %+v\n%s", code, res, stderr)
	}
	results := toolResults(model)

	t.Run("duplicate keys never run", func(t *testing.T) {
		assertVictimKept(t, victim)
		if got := results["dup"]; !strings.Contains(got, `keys "command" and "Command" differ only in case`) {
			t.Fatalf("the model read %q, want an invalid-arguments error", got)
		}
	})

	t.Run("secrets are not in the environment", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(u.workdir, "k.txt"))
		if err != nil || string(b) != "\n" {
			t.Fatalf("k.txt holds %q, %v; want an empty line", b, err)
		}
		env, err := os.ReadFile(filepath.Join(u.workdir, "env.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"sk-e2e-secret-model-key", "TALARIA_DB=", "OPENAI_API_KEY="} {
			if strings.Contains(string(env), secret) {
				t.Errorf("the terminal's environment holds %q:\n%s", secret, env)
			}
		}
		if !strings.Contains(string(env), "GOFLAGS=-buildvcs=false") || !strings.Contains(string(env), "PATH=") {
			t.Errorf("the allowlisted and passed-through variables are missing:\n%s", env)
		}
		out, stderr, code := u.run(time.Minute, "config")
		if code != 0 || !strings.Contains(out, "env_passthrough:") ||
			!regexpLine(out, "# environment passed to tools: PATH HOME .*GOFLAGS") ||
			!regexpLine(out, "# never passed .*OPENAI_API_KEY") || strings.Contains(out, "sk-e2e-secret-model-key") {
			t.Fatalf("talaria config: exit %d\n%s%s", code, out, stderr)
		}
	})

	t.Run("write_file stays inside the roots", func(t *testing.T) {
		for id, path := range escapes {
			if got := results[id]; !strings.Contains(got, "outside the writable roots") || !strings.Contains(got, "nothing was written") {
				t.Errorf("write_file %s: the model read %q, want a refusal", path, got)
			}
		}
		for _, p := range []string{filepath.Join(filepath.Dir(u.workdir), "escape.txt"), filepath.Join(outside, "absolute.txt"),
			filepath.Join(outside, "through-link.txt"), escapes["w4"]} {
			if _, err := os.Lstat(p); err == nil {
				os.Remove(p)
				t.Errorf("%s was written", p)
			}
		}
	})

	t.Run("detached processes die with their command", func(t *testing.T) {
		// The probe sees a marked process that is left running.
		probe := exec.Command("setsid", "sleep", "30")
		probe.Env = append(os.Environ(), "TALARIA_CMD_ID=probe-"+strconv.Itoa(os.Getpid()))
		if err := probe.Start(); err != nil {
			t.Fatal(err)
		}
		// Until the child has exec'd, /proc shows the parent's environment.
		var seen []string
		for deadline := time.Now().Add(5 * time.Second); len(seen) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			seen = markedProcesses("TALARIA_CMD_ID=probe-" + strconv.Itoa(os.Getpid()))
		}
		_ = probe.Process.Kill()
		_ = probe.Wait()
		if len(seen) != 1 {
			t.Fatalf("the probe saw %v, want the one marked sleep", seen)
		}
		for _, id := range []string{"setsid", "nohup"} {
			got := results[id]
			_, marker, ok := strings.Cut(strings.TrimSpace(extractOutput(t, got)), "started ")
			if !ok || marker == "" {
				t.Fatalf("%s: the model read %q", id, got)
			}
			if left := markedProcesses("TALARIA_CMD_ID=" + marker); len(left) > 0 {
				t.Errorf("%s: processes outlived their command: %v", id, left)
			}
		}
	})
}

// TestToolSafetyDuplicateKeysDeny: with approvals.mode deny, a terminal call
// naming "command" twice is refused as invalid arguments: ./victim stays.
func TestToolSafetyDuplicateKeysDeny(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithSteps(append(invalidArgsSteps("dup"), fakellm.TextStep("I could not."))...))
	defer model.Close()
	u := newUser(t, model.URL())
	writeConfig("approvals:\n  mode: deny\n")(t, u)
	victim := makeVictim(t, u)
	res, stderr, code := u.chatJSON(3*time.Minute, "-q", "delete ./victim")
	if code != 0 || !res.Completed {
		t.Fatalf("chat: exit %d, result %+v\n%s", code, res, stderr)
	}
	assertVictimKept(t, victim)
	got := toolResults(model)["dup"]
	if !strings.Contains(got, `keys "command" and "Command" differ only in case`) {
		t.Fatalf("the model read %q, want an invalid-arguments error naming the keys", got)
	}
	if reqs := model.Requests(); len(reqs) != 5 {
		t.Errorf("the model was called %d times, want 5 (three silent re-asks, the error, the answer)", len(reqs))
	}
}

// extractOutput reads the "output" of a terminal result.
func extractOutput(t *testing.T, result string) string {
	t.Helper()
	var r struct {
		Output string `json:"output"`
	}
	if err := json.Unmarshal([]byte(result), &r); err != nil {
		t.Fatalf("terminal result %q: %v", result, err)
	}
	return r.Output
}

// regexpLine reports whether some line of text matches pattern.
func regexpLine(text, pattern string) bool {
	re := regexp.MustCompile(pattern)
	for _, line := range strings.Split(text, "\n") {
		if re.MatchString(line) {
			return true
		}
	}
	return false
}
