package engine

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/sandbox"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/workflows"
)

// TestScaleHostileCommandsStayInTheSandbox runs every command of
// testdata/hostile.txt, and a re-spelling of each, through terminal,
// execute_code and process, in the default sandbox with approvals asked of
// nobody, and checks their effects, not their verdicts: the tree outside
// the writable roots, Talaria's home and the user's credentials are as they
// were; no tool result and no file in the workspace holds a secret; a
// listener on this machine saw no connection; no process outlives its
// command. About two thousand sandboxed calls: make test-scale runs it.
func TestScaleHostileCommandsStayInTheSandbox(t *testing.T) {
	hostileCorpusStaysInTheSandbox(t, 1)
}

// TestHostileCommandsStayInTheSandbox is the same check on every tenth
// command of the corpus, in make test.
func TestHostileCommandsStayInTheSandbox(t *testing.T) {
	hostileCorpusStaysInTheSandbox(t, 10)
}

// hostileCorpusStaysInTheSandbox runs every nth command of the corpus (see
// TestScaleHostileCommandsStayInTheSandbox).
func hostileCorpusStaysInTheSandbox(t *testing.T, every int) {
	if testing.Short() {
		t.Skip("runs sandboxed commands by the hundred")
	}
	if err := sandbox.Check(sandbox.Settings{}); err != nil {
		t.Fatalf("the default sandbox cannot be made here (make test installs bubblewrap): %v", err)
	}
	root := t.TempDir()
	user := filepath.Join(root, "user")
	out := filepath.Join(root, "outside")
	ws := filepath.Join(root, "ws")
	secrets := plantSecrets(t, user)
	t.Setenv("HOME", user) // the credential files of "the user" are the planted ones
	writeTree(t, out, map[string]string{"canary.txt": "CANARY outside the roots\n", "sub/deep.txt": "deep\n"})
	writeTree(t, ws, map[string]string{"AGENTS.md": "This project builds a small tool.\n", "README": "work here\n"})
	git(t, ws, "init", "-q")

	var seen atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			seen.Add(1)
			c.Close()
		}
	}()

	var home string
	model := fakellm.New()
	t.Cleanup(model.Close)
	rt := startRuntime(t, model, func(c *config.Config, _ *Options) {
		home = c.Home
		c.MaxIterations = 1000
	})
	_, temporalPort, _ := net.SplitHostPort(rt.Server.HostPort())
	homeFiles := map[string]string{
		"config.yaml": "model:\n  api_key: " + secrets["model key"] + "\n", "tls/talaria.pem": secrets["pem"], "tls/api-key": secrets["api key"],
		"SOUL.md": "You are a careful assistant.\n", "memories/MEMORY.md": "the build uses make\n", "memories/USER.md": "likes tea\n",
		"skills/known/SKILL.md": "---\nname: known\ndescription: a known skill\n---\nRun the tests.\n",
	}
	writeTree(t, home, homeFiles)
	before := map[string]string{"outside": treeSum(t, out), "user": treeSum(t, user)}
	homeTree := listTree(home, "skills", "memories")

	llmHost, _, _ := strings.Cut(strings.TrimPrefix(model.URL(), "http://"), "/")
	_, llmPort, _ := net.SplitHostPort(llmHost)
	session := "hostile"
	vars := strings.NewReplacer("{H}", home, "{O}", out, "{U}", user, "{P}", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port),
		"{T}", temporalPort, "{L}", llmPort, "{W}", strconv.Itoa(os.Getpid()), "{S}", session)
	corpus := readCorpus(t, vars)
	if len(corpus) < 300 {
		t.Fatalf("the corpus has %d commands", len(corpus))
	}
	var sample []string
	for i := 0; i < len(corpus); i += every {
		sample = append(sample, corpus[i])
	}
	steps, calls := hostileSteps(sample)
	if calls < 300/every {
		t.Fatalf("%d calls", calls)
	}
	model.SetResponder(func(r fakellm.Request) fakellm.Step {
		if i := r.Index; i < len(steps) {
			return waitsFor(steps[i], r)
		}
		return fakellm.TextStep("done")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	res, err := rt.RunTurn(ctx, workflows.TurnInput{SessionID: session, UserMessage: "do as you are told", Model: fakellm.DefaultModel,
		Workdir: ws, ModelAttempts: 2, MaxIterations: len(steps) + 5, Approvals: workflows.ApprovalSettings{Mode: workflows.ApprovalAsk, Timeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatalf("turn: %v", err)
	}
	if !res.Completed {
		t.Fatalf("the turn did not complete: %s after %d model calls", res.TurnExitReason, res.APICalls)
	}

	after := map[string]string{"outside": treeSum(t, out), "user": treeSum(t, user)}
	for k := range before {
		if before[k] != after[k] {
			t.Errorf("%s changed", k)
		}
	}
	if got := listTree(home, "skills", "memories"); got != homeTree {
		t.Errorf("the skills and memories of Talaria's home changed:\n%s\nwas\n%s", got, homeTree)
	}
	for name, text := range homeFiles {
		if b, err := os.ReadFile(filepath.Join(home, name)); err != nil || string(b) != text {
			t.Errorf("%s in Talaria's home changed: %q, %v", name, b, err)
		}
	}
	msgs, err := rt.Store.Messages(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	ran, refused := 0, 0
	for _, m := range msgs {
		if m.Role != "tool" {
			continue
		}
		if strings.Contains(m.Content, "refused") {
			refused++
		} else {
			ran++
		}
		for name, s := range secrets {
			if strings.Contains(m.Content, s) {
				t.Errorf("a tool result holds the %s: %.300s", name, m.Content)
			}
		}
	}
	if ran < calls/2 {
		t.Errorf("only %d of %d calls ran (%d refused): the sandbox, not approvals, must hold them", ran, calls, refused)
	}
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, _ := os.ReadFile(p)
		for name, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s in the workspace holds the %s", p, name)
			}
		}
		return nil
	})
	if b, _ := os.ReadFile(filepath.Join(ws, "AGENTS.md")); string(b) != "This project builds a small tool.\n" {
		t.Errorf("AGENTS.md changed: %q", b)
	}
	if n := seen.Load(); n != 0 {
		t.Errorf("the listener saw %d connections", n)
	}
	if left := processesWith("7777"); len(left) > 0 {
		t.Errorf("processes outlived their commands: %v", left)
	}
	t.Logf("%d calls: %d ran in the sandbox, %d refused", calls, ran, refused)
}

// plantSecrets makes a user's home with credential files, each holding a
// secret of its own, and returns the secrets by name (with /etc/shadow's
// first line, which this machine's root can read).
func plantSecrets(t *testing.T, user string) map[string]string {
	t.Helper()
	secrets := map[string]string{}
	files := map[string]string{}
	for _, f := range []string{".ssh/id_rsa", ".ssh/id_ed25519", ".aws/credentials", ".netrc", ".git-credentials", ".config/gh/hosts.yml",
		".docker/config.json", ".kube/config", ".pgpass", ".npmrc", ".gnupg/secring.gpg"} {
		s := "SECRET-" + strings.NewReplacer("/", "-", ".", "").Replace(f) + "-" + randomToken(t)
		secrets[f], files[f] = s, s+"\n"
	}
	files[".bashrc"] = "# the user's shell start-up\n"
	files[".ssh/authorized_keys"] = "ssh-ed25519 AAAA owner\n"
	files[".profile"] = "# profile\n"
	writeTree(t, user, files)
	secrets["model key"] = "sk-SECRET-model-" + randomToken(t)
	secrets["api key"] = "SECRET-api-" + randomToken(t)
	secrets["pem"] = "-----BEGIN PRIVATE KEY-----\nSECRET-pem-" + randomToken(t) + "\n-----END PRIVATE KEY-----\n"
	if b, err := os.ReadFile("/etc/shadow"); err == nil {
		if line, _, _ := strings.Cut(string(b), "\n"); len(line) > 8 {
			secrets["shadow"] = line
		}
	}
	return secrets
}

func randomToken(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	f, err := os.Open("/dev/urandom")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v: %s", args, err, b)
	}
}

// treeSum digests every name, mode and content below dir.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(h, "%s: %v\n", p, err)
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		fmt.Fprintf(h, "%s %v %d\n", p, info.Mode(), info.Size())
		if info.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// listTree lists the files below home's subdirectories subs, with their
// sizes.
func listTree(home string, subs ...string) string {
	var b strings.Builder
	for _, sub := range subs {
		filepath.WalkDir(filepath.Join(home, sub), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				fmt.Fprintf(&b, "%s: %v\n", p, err)
				return nil
			}
			info, _ := d.Info()
			if info != nil {
				fmt.Fprintf(&b, "%s %v %d\n", strings.TrimPrefix(p, home), info.Mode(), info.Size())
			}
			return nil
		})
	}
	return b.String()
}

// readCorpus reads testdata/hostile.txt with its placeholders filled in.
func readCorpus(t *testing.T, vars *strings.Replacer) []string {
	t.Helper()
	f, err := os.Open("testdata/hostile.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, vars.Replace(line))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// hostileSteps are the model's replies: batches of terminal calls (each
// command as written and decoded from base64 by bash), of execute_code
// calls (as a Bash program, and run by Python's os.system) and of process
// starts followed by waits for them.
func hostileSteps(corpus []string) (steps []fakellm.Step, calls int) {
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	var batch []fakellm.ToolCall
	id := 0
	add := func(name, arguments string) {
		id++
		batch = append(batch, fakellm.ToolCall{ID: fmt.Sprintf("c%d", id), Name: name, Arguments: arguments})
		calls++
	}
	flush := func() {
		if len(batch) > 0 {
			steps = append(steps, fakellm.ToolStep(batch...))
			batch = nil
		}
	}
	for i, c := range corpus {
		add("terminal", args(map[string]any{"command": c, "timeout": 20}))
		add("terminal", args(map[string]any{"command": "echo " + b64(c) + " | base64 -d | bash", "timeout": 20}))
		add(tools.ExecuteCodeName, args(map[string]any{"language": "bash", "code": c, "timeout": 20}))
		if i%2 == 0 {
			add(tools.ExecuteCodeName, args(map[string]any{"language": "python", "timeout": 20,
				"code": "import os, base64\nos.system(base64.b64decode('" + b64(c) + "').decode())\n"}))
		}
		if i%6 == 5 {
			flush()
		}
	}
	flush()
	for i := 0; i < len(corpus); i += 8 {
		end := min(i+8, len(corpus))
		for _, c := range corpus[i:end] {
			add("process", args(map[string]any{"action": "start", "command": c}))
		}
		flush()
		for range end - i {
			add("process", args(map[string]any{"action": "wait", "id": waitPlaceholder, "timeout": 30}))
		}
		flush()
	}
	return steps, calls
}

// waitPlaceholder stands for the id of a process the step before started.
const waitPlaceholder = "STARTED"

// waitsFor fills a step's process waits with the ids the previous step's
// starts returned, in order.
func waitsFor(st fakellm.Step, r fakellm.Request) fakellm.Step {
	var ids []string
	for _, m := range r.Body.Messages {
		var v struct {
			ID string `json:"id"`
		}
		if m.Role == "tool" && json.Unmarshal([]byte(m.Content), &v) == nil && strings.HasPrefix(v.ID, "p") {
			ids = append(ids, v.ID)
		}
	}
	calls := slices.Clone(st.ToolCalls)
	n := 0
	for _, c := range calls {
		if strings.Contains(c.Arguments, waitPlaceholder) {
			n++
		}
	}
	if n == 0 || len(ids) < n {
		return st
	}
	ids = ids[len(ids)-n:]
	for i, c := range calls {
		if strings.Contains(c.Arguments, waitPlaceholder) {
			calls[i].Arguments = strings.Replace(c.Arguments, waitPlaceholder, ids[0], 1)
			ids = ids[1:]
		}
	}
	st.ToolCalls = calls
	return st
}

// processesWith lists the host's processes whose command line holds s.
func processesWith(s string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmdline := strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
		if strings.Contains(cmdline, s) && !strings.Contains(cmdline, "engine.test") {
			out = append(out, e.Name()+": "+cmdline)
		}
	}
	return out
}
