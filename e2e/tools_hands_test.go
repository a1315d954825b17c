package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/fakesearch"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/workflows"
)

// TestPatchTurn: a turn through the real binary whose model patches a
// file (replace mode, then a V4A patch adding a second file); the files
// change and the model reads the diffs.
func TestPatchTurn(t *testing.T) {
	t.Parallel()
	patch := "*** Begin Patch\n*** Update File: app.py\n@@ def greet\n-    return \"hi\"\n+    return \"hello\"\n*** Add File: notes.md\n+# Notes\n*** End Patch"
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "p1", Name: "patch", Arguments: `{"path":"app.py","old_string":"VERSION = 1","new_string":"VERSION = 2"}`}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "p2", Name: "patch", Arguments: mustMarshal(t, map[string]string{"patch": patch})}),
		fakellm.TextStep("Patched."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	if err := os.WriteFile(filepath.Join(u.workdir, "app.py"), []byte("VERSION = 1\n\ndef greet():\n    return \"hi\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, stderr, code := u.chatJSON(3*time.Minute, "-q", "bump the version and fix the greeting")
	if code != 0 || !res.Completed {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(u.workdir, "app.py")); string(data) != "VERSION = 2\n\ndef greet():\n    return \"hello\"\n" {
		t.Errorf("app.py = %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(u.workdir, "notes.md")); string(data) != "# Notes\n" {
		t.Errorf("notes.md = %q", data)
	}
	results := toolResults(model)
	if !strings.Contains(results["p1"], `-VERSION = 1\n+VERSION = 2`) || !strings.Contains(results["p2"], `"action":"added"`) {
		t.Errorf("patch results: %q / %q", results["p1"], results["p2"])
	}
}

// TestSearchFilesTurn: a turn whose model finds a line with search_files;
// the ignored build directory is not searched.
func TestSearchFilesTurn(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "s1", Name: "search_files", Arguments: `{"pattern":"TODO\\(ada\\)","file_glob":"*.go"}`}),
		fakellm.TextStep("Found it."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	for name, body := range map[string]string{
		".gitignore":   "build/\n",
		"cmd/main.go":  "package main\n\n// TODO(ada): handle flags\nfunc main() {}\n",
		"build/gen.go": "// TODO(ada): generated\n",
	} {
		p := filepath.Join(u.workdir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, stderr, code := u.chatJSON(3*time.Minute, "-q", "where is ada's TODO?")
	if code != 0 || !res.Completed {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	got := toolResults(model)["s1"]
	if !strings.Contains(got, "cmd/main.go:3:// TODO(ada): handle flags") || strings.Contains(got, "generated") || !strings.Contains(got, `"count":1`) {
		t.Errorf("search_files result: %q", got)
	}
}

// mustMarshal is v as JSON.
func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestWebFetchTurn: a turn whose model reads a local page with web_fetch
// (web.allow_private lets it reach this machine) gets its Markdown; with
// the default configuration the same call is refused.
func TestWebFetchTurn(t *testing.T) {
	t.Parallel()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><title>Status</title></head><body><h1>Status</h1><p>All systems are <em>operational</em> today.</p></body></html>`)
	}))
	defer page.Close()
	call := fakellm.ToolCall{ID: "f1", Name: "web_fetch", Arguments: mustMarshal(t, map[string]string{"url": page.URL})}
	for _, tt := range []struct {
		config, want string
	}{
		{"web:\n  allow_private: true\n", "All systems are *operational* today."},
		{"", "is not a public address"},
	} {
		model := fakellm.New(fakellm.ToolStep(call), fakellm.TextStep("Read it."))
		u := newUser(t, model.URL())
		if tt.config != "" {
			writeConfig(tt.config)(t, u)
		}
		res, stderr, code := u.chatJSON(3*time.Minute, "-q", "what does the status page say?")
		if code != 0 || !res.Completed {
			t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
		}
		if got := toolResults(model)["f1"]; !strings.Contains(got, tt.want) {
			t.Errorf("config %q: web_fetch result %q, want %q", tt.config, got, tt.want)
		}
		model.Close()
	}
}

// TestSkillsAcrossSessions: the model makes a skill with skill_manage; a
// later session's system prompt lists it, and its model lists and views
// it; talaria skills shows it.
func TestSkillsAcrossSessions(t *testing.T) {
	t.Parallel()
	skill := "---\nname: release\ndescription: Cut a release of the service\nversion: 1\n---\n1. make test\n2. git tag vX\n"
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "m1", Name: "skill_manage", Arguments: mustMarshal(t, map[string]string{"action": "create", "name": "release", "content": skill})}),
		fakellm.TextStep("Saved the procedure."),
		fakellm.ToolStep(fakellm.ToolCall{ID: "l1", Name: "skills_list", Arguments: `{}`}, fakellm.ToolCall{ID: "v1", Name: "skill_view", Arguments: `{"name":"release"}`}),
		fakellm.TextStep("Following the release skill."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	if res, stderr, code := u.chatJSON(3*time.Minute, "-q", "remember how to cut a release", "--session", "one"); code != 0 || !res.Completed {
		t.Fatalf("first session: exit %d %+v\n%s", code, res, stderr)
	}
	if res, stderr, code := u.chatJSON(3*time.Minute, "-q", "cut a release", "--session", "two"); code != 0 || !res.Completed {
		t.Fatalf("second session: exit %d %+v\n%s", code, res, stderr)
	}
	reqs := model.Requests()
	system := reqs[len(reqs)-1].Body.Messages[0]
	if system.Role != "system" || !strings.Contains(system.Content, "- release: Cut a release of the service") {
		t.Errorf("the second session's system prompt does not list the skill:\n%s", system.Content)
	}
	results := toolResults(model)
	if !strings.Contains(results["m1"], "created") || !strings.Contains(results["l1"], `"name":"release"`) || !strings.Contains(results["v1"], "git tag vX") {
		t.Errorf("results: %q / %q / %q", results["m1"], results["l1"], results["v1"])
	}
	if out, stderr, code := u.run(time.Minute, "skills", "list"); code != 0 || !strings.Contains(out, "release (v1) — Cut a release of the service") {
		t.Errorf("skills list: exit %d\n%s%s", code, out, stderr)
	}
	if out, _, code := u.run(time.Minute, "skills", "show", "nope"); code != 1 || out != "" {
		t.Errorf("skills show nope: exit %d %q", code, out)
	}
}

// TestProcessTurn: a turn whose model starts a long-running process,
// polls its output, and kills it; nothing it started is left running.
func TestProcessTurn(t *testing.T) {
	t.Parallel()
	server := `echo listening on 8099; while true; do echo "served $(date +%s%N)"; sleep 0.2; done`
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "s1", Name: "process", Arguments: mustMarshal(t, map[string]string{"action": "start", "command": server})}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "w1", Name: "process", Arguments: `{"action":"wait","id":"p1","timeout":1}`}),
		fakellm.ToolStep(fakellm.ToolCall{ID: "k1", Name: "process", Arguments: `{"action":"kill","id":"p1"}`}),
		fakellm.TextStep("The server ran and is stopped."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	res, stderr, code := u.chatJSON(3*time.Minute, "-q", "start the server, check it, stop it")
	if code != 0 || !res.Completed {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	results := toolResults(model)
	if !strings.Contains(results["s1"], `"status":"running"`) || !strings.Contains(results["w1"], "listening on 8099") ||
		!strings.Contains(results["w1"], "served ") || !strings.Contains(results["k1"], `"status":"exited"`) {
		t.Errorf("process results:\n%s\n%s\n%s", results["s1"], results["w1"], results["k1"])
	}
	if out, _ := exec.Command("pgrep", "-f", "served \\$\\(date").Output(); len(out) > 0 {
		t.Errorf("the process is still running: %s", out)
	}
}

// TestExecuteCodeTurn: a turn whose model runs a Python program that
// computes a value and reads a file through read_file over the tool RPC.
// The program's call is refunded: with max_iterations 1 the model still
// answers with tools offered, instead of the budget's tool-less summary.
func TestExecuteCodeTurn(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skipf("python3 is not installed: %v", err)
	}
	program := "import talaria_tools as t\n" +
		"total = sum(n * n for n in range(1, 11))\n" +
		"notes = t.read_file('notes.txt')\n" +
		"print('sum of squares:', total)\n" +
		"print('first line:', notes['content'].split('|', 1)[1].splitlines()[0])\n"
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "x1", Name: "execute_code", Arguments: mustMarshal(t, map[string]string{"code": program})}),
		fakellm.TextStep("385, and the notes begin with the plan."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	writeConfig("max_iterations: 1\n")(t, u)
	if err := os.WriteFile(filepath.Join(u.workdir, "notes.txt"), []byte("the plan\nthe rest\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, stderr, code := u.chatJSON(3*time.Minute, "-q", "sum the squares to 10 and read my notes")
	if code != 0 || !res.Completed || res.TurnExitReason != workflows.StopTextResponse {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	got := toolResults(model)["x1"]
	if !strings.Contains(got, "sum of squares: 385") || !strings.Contains(got, "first line: the plan") || !strings.Contains(got, `"tool_calls":1`) {
		t.Errorf("execute_code result: %q", got)
	}
	reqs := model.Requests()
	if len(reqs) != 2 || len(reqs[1].Body.Tools) == 0 {
		t.Errorf("the answer came from %d requests, the last offering %d tools; want 2 with tools (the call refunded)", len(reqs), len(reqs[len(reqs)-1].Body.Tools))
	}
}

// TestWebSearchTurn: with a search service configured (Brave's API, here
// the fake), a turn's model searches and reads titles, addresses and
// snippets; without one, web_search is not offered and talaria tools says
// which keys to set.
func TestWebSearchTurn(t *testing.T) {
	t.Parallel()
	search := fakesearch.New("brave-key", fakesearch.Hit{Title: "Temporal docs", URL: "https://docs.temporal.io/", Snippet: "Durable execution"},
		fakesearch.Hit{Title: "Go SDK", URL: "https://pkg.go.dev/go.temporal.io/sdk", Snippet: "Temporal Go SDK"})
	defer search.Close()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "q1", Name: "web_search", Arguments: `{"query":"temporal durable execution","limit":2}`}),
		fakellm.TextStep("Temporal's docs explain durable execution."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	writeConfig(fmt.Sprintf("web:\n  search:\n    backend: brave\n    base_url: %s\n", search.URL()))(t, u)
	u.env["BRAVE_API_KEY"] = "brave-key"
	res, stderr, code := u.chatJSON(3*time.Minute, "-q", "what is durable execution?")
	if code != 0 || !res.Completed {
		t.Fatalf("exit %d, result %+v\n%s", code, res, stderr)
	}
	got := toolResults(model)["q1"]
	if !strings.Contains(got, `"backend":"brave"`) || !strings.Contains(got, `"url":"https://docs.temporal.io/"`) || !strings.Contains(got, `"snippet":"Temporal Go SDK"`) {
		t.Errorf("web_search result: %s", got)
	}
	if reqs := search.Requests(); len(reqs) != 1 || reqs[0].API != "brave" || reqs[0].Query != "temporal durable execution" || reqs[0].Limit != 2 {
		t.Errorf("the search service received %+v", reqs)
	}
	if out, _, code := u.run(time.Minute, "tools"); code != 0 || strings.Contains(out, "web_search is not offered") {
		t.Errorf("tools with a backend: exit %d\n%s", code, out)
	}
	if out, _, code := u.run(time.Minute, "config"); code != 0 || strings.Contains(out, "brave-key") || !strings.Contains(out, "brave_api_key:") {
		t.Errorf("config shows the search key, or not its setting: exit %d\n%s", code, out)
	}

	bare := newUser(t, model.URL())
	if out, _, code := bare.run(time.Minute, "tools"); code != 0 || !strings.Contains(out, "web_search is not offered: no web search backend is configured: set SEARXNG_URL") {
		t.Errorf("tools without a backend: exit %d\n%s", code, out)
	}
}

// TestToolsCommand: talaria tools lists every tool with its toolset and
// whether the configuration offers it; toolsets narrow a chat's tools;
// unknown names are one-line usage errors.
func TestToolsCommand(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("ok"))
	defer model.Close()
	u := newUser(t, model.URL())
	writeConfig("tools:\n  disabled: [shell]\n")(t, u)
	out, stderr, code := u.run(time.Minute, "tools", "-o", "json")
	var list []struct {
		Name, Toolset, Note string
		Enabled             bool
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) < 15 {
		t.Fatalf("tools -o json: exit %d\n%s%s", code, out, stderr)
	}
	for _, tl := range list {
		off := tl.Name == "terminal" || tl.Name == "process" || tl.Name == "execute_code" || tl.Name == "web_search" // disabled, or no search service
		if tl.Toolset == "" || off == tl.Enabled || (tl.Name == "web_search") != (tl.Note != "") {
			t.Errorf("%+v", tl)
		}
	}
	if res, stderr, code := u.chatJSON(time.Minute, "-q", "hi", "--tools", "file,web"); code != 0 || !res.Completed {
		t.Fatalf("chat --tools: exit %d\n%s", code, stderr)
	}
	var offered []string
	for _, tl := range model.Requests()[0].Body.Tools {
		offered = append(offered, tl.Function.Name)
	}
	// The file and web toolsets, as their tools declare them, but
	// web_search, which has no search service here.
	want := slices.DeleteFunc(tools.ExpandToolsets([]string{"file", "web"}), func(n string) bool { return n == "web_search" })
	slices.Sort(want)
	if !slices.Equal(offered, want) || !slices.Contains(offered, "read_file") || !slices.Contains(offered, "web_fetch") {
		t.Errorf("chat --tools file,web offered %v, want %v", offered, want)
	}
	if _, stderr, code := u.run(time.Minute, "chat", "-q", "hi", "--tools", "bash"); code != 2 || !strings.Contains(stderr, `no such tool or toolset`) ||
		strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("chat --tools bash: exit %d %q", code, stderr)
	}
	writeConfig("tools:\n  disabled: [bash]\n")(t, u)
	if _, stderr, code := u.run(time.Minute, "tools"); code != 2 || !strings.Contains(stderr, `tools.disabled: "bash" is not a tool or toolset`) {
		t.Errorf("tools with a bad tools.disabled: exit %d %q", code, stderr)
	}
}
