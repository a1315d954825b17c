package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// acpSDKVersion is the official ACP TypeScript client the editor tests run.
const acpSDKVersion = "2.4.0"

// acpClientScript installs @agentclientprotocol/sdk from npm (once, into
// the user's cache) next to testdata/acp_client.mjs and returns the
// script's path there; without Node the test is skipped, saying so.
func acpClientScript(t *testing.T) string {
	t.Helper()
	for _, bin := range []string{"node", "npm"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed: the editor tests need Node.js to run @agentclientprotocol/sdk", bin)
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "talaria-test", "acp-sdk-"+acpSDKVersion)
	installACPSDK(t, dir)
	src, err := os.ReadFile(filepath.Join("testdata", "acp_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	// Each test's own copy: parallel tests never write the same file.
	script := filepath.Join(dir, "acp_client-"+strings.ReplaceAll(t.Name(), "/", "_")+".mjs")
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return script
}

// acpInstall serializes the install: parallel tests of this process
// would otherwise run npm into the same directory at once.
var acpInstall sync.Mutex

// installACPSDK installs the SDK into dir once: into a directory of its
// own first, then renamed into place whole, with a mark that it is
// complete (a directory without the mark, left by an install that was
// cut short, is made again).
func installACPSDK(t *testing.T, dir string) {
	t.Helper()
	acpInstall.Lock()
	defer acpInstall.Unlock()
	mark := filepath.Join(dir, ".complete")
	if _, err := os.Stat(mark); err == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t.Logf("installing @agentclientprotocol/sdk@%s into %s", acpSDKVersion, dir)
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "acp-sdk-install-")
	if err != nil && os.MkdirAll(filepath.Dir(dir), 0o755) == nil {
		tmp, err = os.MkdirTemp(filepath.Dir(dir), "acp-sdk-install-")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	out, err := exec.CommandContext(ctx, "npm", "install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel", "error",
		"@agentclientprotocol/sdk@"+acpSDKVersion).CombinedOutput()
	if err != nil {
		t.Fatalf("npm install @agentclientprotocol/sdk: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		t.Fatalf("put the SDK in place: %v", err)
	}
}

// editor is the node ACP client running one scenario against `talaria acp`.
type editor struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	msgs []map[string]any
	seen chan map[string]any
	done chan struct{}
}

// startEditor runs the client script with u's environment in u's working
// directory (the session's cwd).
func startEditor(t *testing.T, u *user, script string, args ...string) *editor {
	t.Helper()
	cmd := exec.Command("node", append([]string{script, binary}, args...)...)
	cmd.Dir = u.workdir
	cmd.Env = u.command(context.Background()).Env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e := &editor{cmd: cmd, seen: make(chan map[string]any, 1000), done: make(chan struct{})}
	go func() {
		defer close(e.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			e.mu.Lock()
			e.msgs = append(e.msgs, m)
			e.mu.Unlock()
			e.seen <- m
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-e.done
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("editor stderr:\n%s", stderr.String())
		}
	})
	return e
}

// await returns the first message from now on that ok accepts.
func (e *editor) await(t *testing.T, timeout time.Duration, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case m := <-e.seen:
			if m["event"] == "error" {
				t.Fatalf("the editor failed while waiting for %s: %v", what, m)
			}
			if ok(m) {
				return m
			}
		case <-e.done:
			t.Fatalf("the editor ended before %s", what)
		case <-deadline:
			t.Fatalf("no %s within %v", what, timeout)
		}
	}
}

// updates are the session updates the editor received, in order.
func (e *editor) updates() []map[string]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []map[string]any
	for _, m := range e.msgs {
		if m["event"] == "update" {
			out = append(out, m["update"].(map[string]any))
		}
	}
	return out
}

func isEvent(event string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["event"] == event }
}

func isResponse(method string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["event"] == "response" && m["method"] == method }
}

func field(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// TestACPEditorTurn (issue #33, criterion 1): the official ACP client
// drives `talaria acp` against a running serve: a prompt whose tool calls
// stream in order and whose dangerous command the editor allows, then a
// prompt cancelled while its command runs; every tool call is answered and
// each prompt ends with its stop reason.
func TestACPEditorTurn(t *testing.T) {
	t.Parallel()
	script := acpClientScript(t)
	model := fakellm.New(
		fakellm.ToolStep(
			fakellm.ToolCall{ID: "r1", Name: "read_file", Arguments: `{"path":"notes.txt"}`},
			fakellm.ToolCall{ID: "d1", Name: "terminal", Arguments: `{"command":"rm -rf ./scratch"}`},
			fakellm.ToolCall{ID: "k1", Name: "terminal", Arguments: `{"command":"rm -rf ./keep"}`},
			fakellm.ToolCall{ID: "p1", Name: "todo", Arguments: `{"todos":[{"id":"1","content":"clean up scratch","status":"in_progress"},{"id":"2","content":"keep keep","status":"cancelled"}]}`},
		),
		fakellm.TextStep("All done."),
		fakellm.ToolStep(fakellm.ToolCall{ID: "s1", Name: "terminal", Arguments: `{"command":"sleep 120"}`}),
		fakellm.TextStep("unexpected fourth call"),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	if err := os.WriteFile(filepath.Join(u.workdir, "notes.txt"), []byte("the notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"scratch", "keep"} {
		if err := os.MkdirAll(filepath.Join(u.workdir, d, "old"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	u.serve(0)

	ed := startEditor(t, u, script, "work", u.workdir)
	init := ed.await(t, time.Minute, "the initialize response", isResponse("initialize"))
	if field(init, "result", "agentCapabilities", "loadSession") != true || field(init, "result", "agentInfo", "name") != "talaria" {
		t.Fatalf("initialize: %v", init)
	}
	// Both commands ask; the editor allows one and rejects the other.
	asked := map[string]bool{}
	for range 2 {
		title, _ := field(ed.await(t, 2*time.Minute, "a permission request", isEvent("permission")), "request", "toolCall", "title").(string)
		asked[title] = true
	}
	if !asked["Run: rm -rf ./scratch"] || !asked["Run: rm -rf ./keep"] {
		t.Fatalf("permission asked for %v", asked)
	}
	first := ed.await(t, 2*time.Minute, "the first prompt's answer", isResponse("session/prompt"))
	if field(first, "result", "stopReason") != "end_turn" {
		t.Fatalf("first prompt: %v", first)
	}
	if _, err := os.Stat(filepath.Join(u.workdir, "scratch")); !os.IsNotExist(err) {
		t.Fatalf("the allowed command did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(u.workdir, "keep", "old")); err != nil {
		t.Fatalf("the rejected command ran: %v", err)
	}
	// The first turn's updates, in order: each call starts before it ends,
	// the answer comes after both.
	order := map[string]int{}
	var reply strings.Builder
	for i, up := range ed.updates() {
		key := ""
		switch up["sessionUpdate"] {
		case "tool_call":
			key = "start " + up["toolCallId"].(string)
			if up["status"] == "failed" { // refused before it ran: told whole, ended
				key = "end " + up["toolCallId"].(string) + " failed"
			}
		case "tool_call_update":
			if st, _ := up["status"].(string); st == "completed" || st == "failed" {
				key = "end " + up["toolCallId"].(string) + " " + st
			}
		case "agent_message_chunk":
			reply.WriteString(field(up, "content", "text").(string))
			if strings.Contains(reply.String(), "All done") {
				key = "answer"
			}
		}
		if _, dup := order[key]; key != "" && !dup {
			order[key] = i
		}
	}
	// The todo list is the editor's plan, told after the call that wrote it.
	for i, up := range ed.updates() {
		if up["sessionUpdate"] == "plan" {
			b, _ := json.Marshal(up["entries"])
			if string(b) != `[{"content":"clean up scratch","priority":"medium","status":"in_progress"}]` {
				t.Fatalf("plan: %s", b)
			}
			order["plan"] = i
			break
		}
	}
	for _, pair := range [][2]string{{"start r1", "end r1 completed"}, {"start d1", "end d1 completed"},
		{"end r1 completed", "answer"}, {"end d1 completed", "answer"}, {"end k1 failed", "answer"},
		{"end p1 completed", "plan"}, {"plan", "answer"}} {
		a, okA := order[pair[0]]
		b, okB := order[pair[1]]
		if !okA || !okB || a >= b {
			t.Fatalf("%q (%d, %v) should come before %q (%d, %v); updates:\n%v", pair[0], a, okA, pair[1], b, okB, ed.updates())
		}
	}

	ed.await(t, 2*time.Minute, "the cancel", isEvent("cancel"))
	second := ed.await(t, 2*time.Minute, "the cancelled prompt's answer", isResponse("session/prompt"))
	if field(second, "result", "stopReason") != "cancelled" {
		t.Fatalf("second prompt: %v", second)
	}
	answered := false
	for _, up := range ed.updates() {
		if up["sessionUpdate"] == "tool_call_update" && up["toolCallId"] == "s1" {
			st, _ := up["status"].(string)
			answered = answered || st == "completed" || st == "failed"
		}
	}
	if !answered {
		t.Fatalf("the cancelled tool call was never answered; updates:\n%v", ed.updates())
	}
	ed.await(t, time.Minute, "the end of the script", isEvent("done"))
	if n := len(model.Requests()); n != 3 {
		t.Fatalf("the model was asked %d times, want 3", n)
	}
}

// acpRaw is `talaria acp` spoken to line by line, without an SDK.
type acpRaw struct {
	in    io.WriteCloser
	lines chan map[string]any
}

func startACPRaw(t *testing.T, u *user) *acpRaw {
	t.Helper()
	cmd := u.command(context.Background(), "acp")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &acpRaw{in: in, lines: make(chan map[string]any, 100)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"not_json": sc.Text()}
			}
			r.lines <- m
		}
		close(r.lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("talaria acp stderr:\n%s", stderr.String())
		}
	})
	return r
}

func (r *acpRaw) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// reply waits for the response with id (a JSON number or null), skipping
// notifications.
func (r *acpRaw) reply(t *testing.T, id any) map[string]any {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case m, ok := <-r.lines:
			if !ok {
				t.Fatalf("talaria acp closed its output waiting for the reply to %v", id)
			}
			if m["not_json"] != nil {
				t.Fatalf("talaria acp wrote something that is not JSON on stdout: %v", m["not_json"])
			}
			if _, isResp := m["method"]; !isResp && m["id"] == id {
				return m
			}
		case <-deadline:
			t.Fatalf("no reply to %v", id)
		}
	}
}

func wantError(t *testing.T, m map[string]any, code float64, text string) {
	t.Helper()
	if field(m, "error", "code") != code {
		t.Fatalf("want error %v, got %v", code, m)
	}
	b, _ := json.Marshal(m["error"])
	if !strings.Contains(string(b), text) {
		t.Fatalf("error %s does not say %q", b, text)
	}
}

// TestACPProtocolErrors (issue #33, criterion 3): malformed JSON-RPC, an
// unknown method, a prompt for an unknown session, a bad cwd and a second
// prompt while one runs get JSON-RPC errors that say what is wrong, and
// the agent keeps serving.
func TestACPProtocolErrors(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "s1", Name: "terminal", Arguments: `{"command":"sleep 120"}`}),
		fakellm.TextStep("unexpected second call"),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)
	r := startACPRaw(t, u)

	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	if res := r.reply(t, 1.0); field(res, "result", "protocolVersion") != 1.0 {
		t.Fatalf("initialize: %v", res)
	}
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"initialize",`)
	wantError(t, r.reply(t, nil), -32700, "not JSON")
	r.send(t, `[{"jsonrpc":"2.0","id":3,"method":"initialize"}]`)
	wantError(t, r.reply(t, nil), -32600, "batches")
	r.send(t, `{"jsonrpc":"2.0","id":4,"method":"session/teleport","params":{}}`)
	wantError(t, r.reply(t, 4.0), -32601, "session/teleport")
	r.send(t, `{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"nobody","prompt":[{"type":"text","text":"hi"}]}}`)
	wantError(t, r.reply(t, 5.0), -32602, `unknown session \"nobody\"`)
	r.send(t, `{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}`)
	wantError(t, r.reply(t, 6.0), -32602, "not an absolute path")
	r.send(t, `{"jsonrpc":"2.0","id":7,"method":"session/load","params":{"sessionId":"no-such-session","cwd":"`+u.workdir+`","mcpServers":[]}}`)
	wantError(t, r.reply(t, 7.0), -32602, "no session")

	r.send(t, `{"jsonrpc":"2.0","id":8,"method":"session/new","params":{"cwd":"`+u.workdir+`","mcpServers":[]}}`)
	sid, _ := field(r.reply(t, 8.0), "result", "sessionId").(string)
	if sid == "" {
		t.Fatal("no session id")
	}
	// The slash commands are told right after the new session, before any
	// prompt; they answer without the model.
	if m := <-r.lines; field(m, "params", "sessionId") != sid || field(m, "params", "update", "sessionUpdate") != "available_commands_update" {
		t.Fatalf("after session/new: %v", m)
	}
	r.send(t, `{"jsonrpc":"2.0","id":80,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/usage"}]}}`)
	var usage bool
	for done := false; !done; {
		m, ok := <-r.lines
		if !ok {
			t.Fatal("talaria acp closed its output")
		}
		text, _ := field(m, "params", "update", "content", "text").(string)
		usage = usage || strings.Contains(text, "This session: 0 turns")
		done = m["id"] == 80.0
		if done && field(m, "result", "stopReason") != "end_turn" {
			t.Fatalf("/usage: %v", m)
		}
	}
	if !usage {
		t.Fatal("/usage was not answered")
	}
	r.send(t, `{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"wait"}]}}`)
	// Once the command runs, a second prompt is refused.
	for started := false; !started; {
		m, ok := <-r.lines
		if !ok {
			t.Fatal("talaria acp closed its output")
		}
		started = field(m, "params", "update", "sessionUpdate") == "tool_call"
	}
	r.send(t, `{"jsonrpc":"2.0","id":10,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"again"}]}}`)
	wantError(t, r.reply(t, 10.0), -32600, "already running a prompt")
	r.send(t, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"`+sid+`"}}`)
	if res := r.reply(t, 9.0); field(res, "result", "stopReason") != "cancelled" {
		t.Fatalf("the cancelled prompt: %v", res)
	}
	// Still serving.
	r.send(t, `{"jsonrpc":"2.0","id":11,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	if res := r.reply(t, 11.0); res["result"] == nil {
		t.Fatalf("initialize after the errors: %v", res)
	}
}

// TestACPEditorKilledTurnGoesOn (issue #33, criterion 2): the editor and
// its `talaria acp` are killed while a turn runs; the turn goes on in
// serve, and a new `talaria acp` that loads the session sees it (running
// or finished) and receives its updates. The command ran once and the
// model was asked once per call.
func TestACPEditorKilledTurnGoesOn(t *testing.T) {
	t.Parallel()
	script := acpClientScript(t)
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "j1", Name: "terminal", Arguments: `{"command":"echo run >> count.txt; sleep 4"}`}),
		fakellm.TextStep("The long job finished."),
		fakellm.TextStep("unexpected third call"),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	u.serve(0)

	first := startEditor(t, u, script, "start", u.workdir)
	spawned := first.await(t, time.Minute, "the agent's start", isEvent("spawned"))
	sid, _ := field(first.await(t, time.Minute, "the new session", isResponse("session/new")), "result", "sessionId").(string)
	first.await(t, 2*time.Minute, "the command's start", func(m map[string]any) bool {
		return m["event"] == "update" && field(m, "update", "toolCallId") == "j1"
	})
	// The editor and its agent die at once.
	if p, err := os.FindProcess(int(spawned["pid"].(float64))); err == nil {
		_ = p.Kill()
	}
	_ = first.cmd.Process.Kill()

	second := startEditor(t, u, script, "load", u.workdir, sid)
	second.await(t, time.Minute, "the load response", isResponse("session/load"))
	second.await(t, 2*time.Minute, "the turn's answer", isEvent("done"))
	var sawCommand bool
	for _, up := range second.updates() {
		sawCommand = sawCommand || (up["sessionUpdate"] == "tool_call" && up["toolCallId"] == "j1")
	}
	if !sawCommand {
		t.Fatalf("the loaded session does not show the command; updates:\n%v", second.updates())
	}
	data, err := os.ReadFile(filepath.Join(u.workdir, "count.txt"))
	if err != nil || strings.Count(string(data), "run") != 1 {
		t.Fatalf("the command ran %d times (%v)", strings.Count(string(data), "run"), err)
	}
	if n := len(model.Requests()); n != 2 {
		t.Fatalf("the model was asked %d times, want 2", n)
	}
}
