package e2e

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/shell"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// readmeEndpoint is the endpoint the README's quick start names; the test
// puts the scripted model's URL in its place, and changes nothing else.
const readmeEndpoint = "http://localhost:11434/v1"

// quickStart returns the shell commands of README.md's quick start: every
// line of the fenced sh blocks under "## Quick start", comments removed,
// split into words as a shell would.
func quickStart(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds [][]string
	in, fenced := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = strings.EqualFold(strings.TrimSpace(line[3:]), "quick start")
		case !in:
		case strings.HasPrefix(line, "```"):
			fenced = !fenced && strings.TrimSpace(line[3:]) == "sh"
		case fenced && strings.TrimSpace(line) != "":
			words, err := shell.Fields(line, func(string) string { return "" })
			if err != nil {
				t.Fatalf("README quick start line %q: %v", line, err)
			}
			if len(words) > 0 {
				cmds = append(cmds, words)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds
}

// TestReadmeQuickStart runs README.md's quick start literally, in order,
// on a fresh TALARIA_HOME whose shell sets no model variable: `make serve`
// is the built binary's `serve`, `bin/talaria` the built binary, and the
// README's endpoint the scripted model. `make test` is the suite this test
// is part of, so it is not run again. The chat answers with the model the
// README names, and serve picked the endpoint up without a restart.
func TestReadmeQuickStart(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("There are 42 Go files with 4,242 lines."))
	defer model.Close()
	u := newUser(t, model.URL())
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "TALARIA_MODEL"} {
		delete(u.env, k)
	}
	cmds := quickStart(t)
	if len(cmds) < 3 {
		t.Fatalf("the quick start has %d commands: %q", len(cmds), cmds)
	}
	var srv *server
	ran := map[string]bool{}
	for _, words := range cmds {
		line := strings.Join(words, " ")
		switch {
		case line == "make serve":
			srv = u.serve(0)
			ran["serve"] = true
		case line == "make test":
			// The suite this test belongs to.
		case words[0] == "bin/talaria":
			if srv == nil {
				t.Fatalf("%q runs before serve in the quick start", line)
			}
			args := append([]string(nil), words[1:]...)
			for i, a := range args {
				if a == readmeEndpoint {
					args[i] = model.URL()
				}
			}
			stdout, stderr, code := u.run(3*time.Minute, args...)
			if code != 0 {
				t.Fatalf("%q exited %d\nstdout:\n%s\nstderr:\n%s\nserve:\n%s", line, code, stdout, stderr, serveOutput(srv))
			}
			switch {
			case len(args) > 1 && args[0] == "model" && args[1] == "set":
				if !strings.Contains(stderr, "talaria serve (pid") || !strings.Contains(stderr, "uses it for new model calls") {
					t.Fatalf("%q did not see serve pick the settings up:\n%s\nserve:\n%s", line, stderr, serveOutput(srv))
				}
				ran["model set"] = true
			case len(args) > 1 && args[0] == "chat" && args[1] == "-q":
				if !strings.Contains(stdout, "There are 42 Go files") {
					t.Fatalf("%q printed no answer:\nstdout:\n%s\nstderr:\n%s", line, stdout, stderr)
				}
				ran["chat -q"] = true
			}
		default:
			t.Fatalf("the quick start runs %q, which this test does not know how to run", line)
		}
	}
	for _, step := range []string{"serve", "model set", "chat -q"} {
		if !ran[step] {
			t.Fatalf("the quick start no longer runs %s: %q", step, cmds)
		}
	}
	reqs := model.Requests()
	if len(reqs) != 1 || reqs[0].Body.Model != "llama3.1" {
		t.Fatalf("model requests: %d, model %q", len(reqs), firstModel(reqs))
	}
	if !strings.Contains(serveOutput(srv), "no model endpoint is configured: run 'talaria model set") {
		t.Fatalf("serve on a fresh home did not say how to set the endpoint:\n%s", serveOutput(srv))
	}
	if !strings.Contains(serveOutput(srv), "config reloaded: model llama3.1 at "+model.URL()) {
		t.Fatalf("serve did not say it reloaded:\n%s", serveOutput(srv))
	}
}

func firstModel(reqs []fakellm.Request) string {
	if len(reqs) == 0 {
		return ""
	}
	return reqs[0].Body.Model
}
