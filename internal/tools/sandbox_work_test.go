package tools

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/sandbox"
)

// TestEverydayWorkInTheSandbox: the commands of everyday work run in the
// default sandbox as they do outside it: Go builds and tests, make, npm,
// git, pytest and grep in the workspace; with the network on, git clone
// and curl of a server on this machine that is not one of Talaria's.
func TestEverydayWorkInTheSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests projects in a sandbox")
	}
	t.Parallel()
	if err := sandbox.Check(sandbox.Settings{}); err != nil {
		t.Fatalf("no sandbox here (make test installs bubblewrap): %v", err)
	}
	ws := t.TempDir()
	home := t.TempDir()
	cache := hostCacheDir(t)
	writeFiles(t, ws, map[string]string{
		"go.mod":          "module example.com/work\n\ngo 1.22\n",
		"main.go":         "package main\n\nfunc main() { println(add(2, 3)) }\n\nfunc add(a, b int) int { return a + b }\n",
		"main_test.go":    "package main\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif add(2, 3) != 5 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n",
		"Makefile":        "out.txt: main.go\n\tcp main.go out.txt\n",
		"package.json":    `{"name":"work","version":"1.0.0","scripts":{"test":"node -e \"require('assert').strictEqual(1+1,2); console.log('npm ok')\""}}`,
		"test_calc.py":    "def test_add():\n    assert 1 + 1 == 2\n",
		"notes/todo.txt":  "first line\nTODO: write the docs\n",
		"notes/other.txt": "nothing here\n",
	})
	run := func(t *testing.T, policy Policy, command string) terminalResult {
		t.Helper()
		policy.Home = home
		out, err := runTool(t, Terminal, Env{Workdir: ws, Policy: policy}, mustJSON(t, map[string]any{"command": command, "timeout": 600}))
		if err != nil {
			t.Fatalf("%s: %v", command, err)
		}
		return decode[terminalResult](t, out)
	}
	policy := Policy{Sandbox: sandbox.Settings{Cache: cache}}
	for _, tc := range []struct{ command, want string }{
		{"go build -o app . && ./app 2>&1", "5"},
		{"go test ./...", "ok"},
		{"go vet ./...", ""},
		{"make && cat out.txt", "package main"},
		{"npm test", "npm ok"},
		{"git init -q && git add -A && git -c user.name=a -c user.email=a@b commit -qm first && echo changed >> notes/other.txt && git status --short && git diff --stat", "notes/other.txt"},
		{"git -c user.name=a -c user.email=a@b commit -qam second && git log --oneline | wc -l", "2"},
		{"/usr/bin/python3 -m pytest -q -p no:cacheprovider test_calc.py", "1 passed"},
		{"grep -rn TODO .", "notes/todo.txt:2:TODO"},
	} {
		t.Run(strings.Fields(tc.command)[0], func(t *testing.T) {
			r := run(t, policy, tc.command)
			if r.ExitCode != 0 || !strings.Contains(r.Output, tc.want) {
				t.Errorf("%s: exit %d, output %q, want %q", tc.command, r.ExitCode, r.Output, tc.want)
			}
		})
	}

	// A repository and a file served over HTTP by this machine.
	srv := t.TempDir()
	bare := filepath.Join(srv, "repo.git")
	gitRun(t, "", "clone", "-q", "--bare", ws, bare)
	gitRun(t, bare, "update-server-info")
	if err := os.WriteFile(filepath.Join(srv, "hello.txt"), []byte("hello from outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.FileServer(http.Dir(srv))}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	url := "http://" + ln.Addr().String()
	on := Policy{Sandbox: sandbox.Settings{Network: sandbox.NetworkOn, Ports: []int{7233}, Cache: cache}}
	if r := run(t, on, "curl -sS "+url+"/hello.txt"); !strings.Contains(r.Output, "hello from outside") {
		t.Errorf("curl with the network on: %+v", r)
	}
	if r := run(t, on, "git clone -q "+url+"/repo.git cloned && ls cloned"); !strings.Contains(r.Output, "main.go") {
		t.Errorf("git clone with the network on: %+v", r)
	}
	if r := run(t, policy, "curl -sS --max-time 5 "+url+"/hello.txt"); r.ExitCode == 0 || strings.Contains(r.Output, "hello from outside") {
		t.Errorf("curl with the network off reached the server: %+v", r)
	}
}

// hostCacheDir is this machine's ~/.cache, which the test lends the
// sandbox so that its Go builds start warm.
func hostCacheDir(t *testing.T) string {
	t.Helper()
	dir, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gitOut is git's output in dir, trimmed.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v: %s", args, err, b)
	}
}

// BenchmarkSandboxCost is the cost of the sandbox per command: true and ls
// run by the terminal tool unconfined and in the default sandbox.
func BenchmarkSandboxCost(b *testing.B) {
	if err := sandbox.Check(sandbox.Settings{}); err != nil {
		b.Skipf("no sandbox here: %v", err)
	}
	ws := b.TempDir()
	for _, mode := range []sandbox.Mode{sandbox.ModeOff, sandbox.ModeWorkspaceWrite} {
		for _, command := range []string{"true", "ls -la"} {
			b.Run(string(mode)+"/"+strings.Fields(command)[0], func(b *testing.B) {
				env := Env{Workdir: ws, Policy: Policy{Home: b.TempDir(), Sandbox: sandbox.Settings{Mode: mode}}}
				args := mustJSON(b, map[string]any{"command": command})
				for b.Loop() {
					if _, err := runTool(b, Terminal, env, args); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func TestSandboxHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		res  terminalResult
		hint bool
	}{
		{terminalResult{Output: "touch: cannot touch '/opt/x': Read-only file system\n", ExitCode: 1}, true},
		{terminalResult{Output: "curl: (6) Could not resolve host: example.com\n", ExitCode: 6}, true},
		{terminalResult{Output: "cat: /root/.ssh/id_rsa: No such file or directory\n", ExitCode: 1}, true},
		{terminalResult{Output: "FAIL: TestAdd\n", ExitCode: 1}, false},
		{terminalResult{Output: "Read-only file system, but it worked\n", ExitCode: 0}, false},
	} {
		if got := sandboxHint(tc.res, sandbox.Settings{}) != ""; got != tc.hint {
			t.Errorf("%q (exit %d): hint %v, want %v", tc.res.Output, tc.res.ExitCode, got, tc.hint)
		}
	}
}

// TestSandboxKeepsWhatRunsLater: what runs or instructs later outside the
// sandbox cannot be planted from inside it: a repository's hooks and
// configuration (nested ones and submodules too), neither in place nor by
// renaming the .git directory or one of its parents away; a home's
// start-up files, when the home is the working directory.
func TestSandboxKeepsWhatRunsLater(t *testing.T) {
	t.Parallel()
	if err := sandbox.Check(sandbox.Settings{}); err != nil {
		t.Fatalf("no sandbox here: %v", err)
	}
	ws := t.TempDir()
	gitRun(t, ws, "init", "-q")
	bashrc := filepath.Join(t.TempDir(), ".bashrc") // the owner's, outside the roots
	if err := os.WriteFile(bashrc, []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(ws, "libs", "inner")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, nested, "init", "-q")
	os.RemoveAll(filepath.Join(nested, ".git", "hooks")) // a repository without hooks
	before := map[string]string{}
	for _, g := range []string{filepath.Join(ws, ".git"), filepath.Join(nested, ".git")} {
		b, _ := os.ReadFile(filepath.Join(g, "config"))
		before[g] = string(b)
	}
	env := Env{Workdir: ws, Policy: Policy{Home: t.TempDir()}}
	for _, command := range []string{
		"printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit",
		"echo '[core] fsmonitor = echo pwned' >> .git/config",
		"mv .git .git-old",
		"mv libs libs2",
		"mkdir -p libs/inner/.git/hooks && echo x > libs/inner/.git/hooks/post-checkout",
		"echo '[core] fsmonitor = x' >> libs/inner/.git/config",
		// Another directory's configuration and hooks through commondir,
		// here or in a worktree's record: the command sees what it wrote
		// (and fails after, to be told from a command that ran), but the
		// repository never gets it.
		`mkdir -p evil && git init -q evil && printf '[core]\n\tfsmonitor = "touch ../MARK; false"\n' >> evil/.git/config && echo ../evil/.git > .git/commondir && test -s .git/commondir && false`,
		"echo ../../evil/.git > libs/inner/.git/commondir && false",
		"mkdir -p .git/worktrees/w && echo ../../../evil/.git > .git/worktrees/w/commondir && false",
		// A reflog or a ref that is a link elsewhere: the owner's git would
		// write through it.
		"mkdir -p .git/logs && ln -sf " + bashrc + " .git/logs/HEAD && false",
		"mkdir -p .git/refs/heads && ln -s " + filepath.Dir(bashrc) + " .git/refs/elsewhere && false",
	} {
		out, err := runTool(t, Terminal, env, mustJSON(t, map[string]any{"command": command}))
		if err != nil {
			t.Fatal(err)
		}
		if r := decode[terminalResult](t, out); r.ExitCode == 0 {
			t.Errorf("%s: ran: %s", command, r.Output)
		}
	}
	for g, text := range before {
		if b, _ := os.ReadFile(filepath.Join(g, "config")); string(b) != text {
			t.Errorf("%s/config changed", g)
		}
		hooks, _ := os.ReadDir(filepath.Join(g, "hooks"))
		for _, h := range hooks {
			if !strings.HasSuffix(h.Name(), ".sample") {
				t.Errorf("a hook was planted: %s/hooks/%s", g, h.Name())
			}
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".git-old")); err == nil {
		t.Error(".git was renamed")
	}
	for _, g := range []string{filepath.Join(ws, ".git"), filepath.Join(nested, ".git")} {
		for _, planted := range []string{"commondir", "worktrees"} {
			if _, err := os.Lstat(filepath.Join(g, planted)); err == nil {
				t.Errorf("%s/%s was planted", g, planted)
			}
		}
	}
	for _, p := range []string{filepath.Join(ws, ".git", "logs", "HEAD"), filepath.Join(ws, ".git", "refs", "elsewhere")} {
		if info, err := os.Lstat(p); err == nil && info.Mode()&os.ModeSymlink != 0 {
			t.Errorf("%s is a link the owner's git would write through", p)
		}
	}
	gitRun(t, ws, "status", "--short") // the owner's git
	if _, err := os.Stat(filepath.Join(ws, "MARK")); err == nil {
		t.Fatal("the owner's git ran a command the sandbox planted")
	}
	// Everyday git still works, and what it did is the repository's.
	out, _ := runTool(t, Terminal, env, mustJSON(t, map[string]any{"command": "echo a > f && git add f && git -c user.name=a -c user.email=a@b commit -qm one && git log --oneline | wc -l"}))
	if r := decode[terminalResult](t, out); r.ExitCode != 0 || strings.TrimSpace(r.Output) != "1" || len(r.GitNotKept) != 0 {
		t.Errorf("git commit in the sandbox: %+v", r)
	}
	out, _ = runTool(t, Terminal, env, mustJSON(t, map[string]any{"command": "git switch -q -c topic && echo b >> f && git add f && git -c user.name=a -c user.email=a@b commit -qm two && echo b > g && git add g"}))
	if r := decode[terminalResult](t, out); r.ExitCode != 0 || len(r.GitNotKept) != 0 {
		t.Errorf("git switch, commit and add in the sandbox: %+v", r)
	}
	if got := gitOut(t, ws, "rev-parse", "--abbrev-ref", "HEAD"); got != "topic" {
		t.Errorf("the owner's HEAD is %q, want topic", got)
	}
	if got := gitOut(t, ws, "log", "--format=%s"); got != "two\none" {
		t.Errorf("the owner's log: %q", got)
	}
	if got := gitOut(t, ws, "status", "--porcelain", "--untracked-files=no"); got != "A  g" {
		t.Errorf("the owner's index: %q, want g added", got)
	}
	// A split index comes back whole.
	out, _ = runTool(t, Terminal, env, mustJSON(t, map[string]any{"command": "git update-index --split-index && echo c > h && git add h"}))
	if r := decode[terminalResult](t, out); r.ExitCode != 0 || len(r.GitNotKept) != 0 {
		t.Errorf("a split index in the sandbox: %+v", r)
	}
	if got := gitOut(t, ws, "status", "--porcelain", "--untracked-files=no"); got != "A  g\nA  h" {
		t.Errorf("the owner's split index: %q, want g and h added", got)
	}
	gitRun(t, ws, "-c", "user.name=o", "-c", "user.email=o@x", "commit", "-q", "--allow-empty", "-m", "the owner's") // writes the reflogs
	if b, _ := os.ReadFile(bashrc); string(b) != "# mine\n" {
		t.Errorf("the owner's git wrote through a planted link: %q", b)
	}
	if left, _ := os.ReadDir(filepath.Join(ws, ".git", stageDirName)); len(left) != 0 {
		t.Errorf("staging left behind: %v", left)
	}
}

func TestSandboxRoots(t *testing.T) {
	t.Parallel()
	homes := []string{"/home/u", "/root"}
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "proj"), 0o755)
	os.MkdirAll(filepath.Join(home, ".config"), 0o755)
	got := sandboxRoots([]string{home, "/srv/work", "/home", "/talaria/x"}, "/talaria", append(homes, home))
	want := []string{filepath.Join(home, "proj"), "/srv/work"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("sandboxRoots = %v, want %v", got, want)
	}
	if got := anchors([]string{"/w"}, []string{"/w/a/b/c"}); len(got) != 0 {
		t.Errorf("anchors of a path that does not exist: %v", got)
	}
}
