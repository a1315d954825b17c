package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	openai "github.com/sashabaranov/go-openai"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// chromiumPath is Debian's Chromium, which the page tests drive.
const chromiumPath = "/usr/bin/chromium"

var (
	chromiumOnce sync.Once
	chromiumErr  error
)

// needChromium makes sure Chromium is installed: when it is missing and the
// test runs as root with apt-get, it installs Debian's package once (as
// scripts/with-postgres.sh installs PostgreSQL). It fails the test with one
// line when it cannot.
func needChromium(t *testing.T) string {
	t.Helper()
	chromiumOnce.Do(func() { chromiumErr = installChromium() })
	if chromiumErr != nil {
		t.Fatalf("chromium: %v", chromiumErr)
	}
	return chromiumPath
}

func installChromium() error {
	if _, err := os.Stat(chromiumPath); err == nil {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("%s is missing and the test does not run as root to install it (apt-get install chromium)", chromiumPath)
	}
	aptGet, err := exec.LookPath("apt-get")
	if err != nil {
		return fmt.Errorf("%s is missing and apt-get is unavailable to install it", chromiumPath)
	}
	fmt.Fprintln(os.Stderr, "e2e: installing chromium with apt-get")
	for _, args := range [][]string{{"update"}, {"install", "-y", "chromium"}} {
		cmd := exec.Command(aptGet, args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("apt-get %s: %v", strings.Join(args, " "), err)
		}
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		return fmt.Errorf("%s is still missing after apt-get install chromium", chromiumPath)
	}
	return nil
}

// browser is a headless Chromium tab, with what its console reported.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

// newBrowser starts headless Chromium for the test, on a closed network:
// no background traffic, no QUIC, a fresh profile.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	exe := needChromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 820),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	b := &browser{t: t, ctx: ctx}
	// The first Run starts the browser; it must have no deadline.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, m)
			b.mu.Unlock()
		}
	}()
	return b
}

// do runs actions with a deadline.
func (b *browser) do(timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v\n%s", err, b.page())
	}
}

// eval evaluates a JavaScript expression.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v\n%s", expr, err, b.page())
	}
	return v
}

// waitFor waits until the expression is true, failing the test with what
// the page shows when it does not become true within timeout.
func (b *browser) waitFor(what, expr string, timeout time.Duration) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+expr+")", chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		b.t.Fatalf("waiting for %s: %v\n%s", what, err, b.page())
	}
}

// page is what the page shows: its status line and its messages.
func (b *browser) page() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`"status: " + document.getElementById("status").textContent +
		"\nmessages:\n" + document.getElementById("messages").innerText`))
	if err != nil {
		return "(page unreadable: " + err.Error() + ")"
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var lines []string
	for _, m := range b.console {
		lines = append(lines, m.String())
	}
	return s + "\nconsole:\n" + strings.Join(lines, "\n")
}

// problems are the console's CSP violations and uncaught exceptions.
func (b *browser) problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.console {
		if m.IsException() || strings.Contains(m.Text, "Content Security Policy") || strings.Contains(m.Text, "Content-Security-Policy") {
			out = append(out, m.String())
		}
	}
	return out
}

// screenshot saves a full-page screenshot as a test artifact.
func (b *browser) screenshot(name string) string {
	b.t.Helper()
	dir := os.Getenv("TALARIA_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "talaria-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
	return path
}

// pageModel answers the page test's turns by what the user asked. Requests
// without tools (a title, a summary) get a short text.
func pageModel(req fakellm.Request) fakellm.Step {
	if len(req.Body.Tools) == 0 {
		return fakellm.TextStep("Web page test")
	}
	user, toolResults := "", 0
	for _, m := range req.Body.Messages {
		switch m.Role {
		case openai.ChatMessageRoleUser:
			// A message after an interrupted turn that had no reply
			// joins it: the newest text is the last paragraph.
			parts := strings.Split(m.Content, "\n\n")
			user, toolResults = parts[len(parts)-1], 0
		case openai.ChatMessageRoleTool:
			toolResults++
		}
	}
	switch {
	case strings.Contains(user, "run echo"):
		if toolResults == 0 {
			return fakellm.ToolStep(fakellm.ToolCall{ID: "call_echo", Name: "terminal", Arguments: `{"command":"echo hi"}`})
		}
		return fakellm.Step{Text: "The command printed hi. Here is **bold news** and `inline code`.\n\n" +
			"<img src=x onerror=\"window.pwned=1\"> [a link](javascript:window.pwned=1) [docs](https://example.com/docs)",
			ChunkDelay: 20 * time.Millisecond}
	case strings.Contains(user, "hang"):
		return fakellm.Step{Hang: true}
	case strings.Contains(user, "sleep a while"):
		if toolResults == 0 {
			return fakellm.ToolStep(fakellm.ToolCall{ID: "call_sleep", Name: "terminal", Arguments: `{"command":"sleep 37.25"}`})
		}
		return fakellm.TextStep("Slept.")
	case strings.Contains(user, "scratch"):
		if toolResults == 0 {
			return fakellm.ToolStep(fakellm.ToolCall{ID: "call_rm", Name: "terminal", Arguments: `{"command":"rm -rf ./scratch"}`})
		}
		return fakellm.TextStep("The scratch directory is **gone**.")
	case strings.Contains(user, "colour"):
		if toolResults == 0 {
			return fakellm.ToolStep(fakellm.ToolCall{ID: "call_ask", Name: "clarify", Arguments: `{"question":"Which colour should the button be?","choices":["red","blue"]}`})
		}
		last, _ := req.LastMessage()
		if strings.Contains(last.Content, "blue") {
			return fakellm.TextStep("Blue it is: **noted**.")
		}
		return fakellm.TextStep("The answer did not arrive.")
	case strings.Contains(user, "long story"):
		var words []string
		for i := 1; i <= 40; i++ {
			words = append(words, fmt.Sprintf("word%02d", i))
		}
		return fakellm.Step{Text: strings.Join(words, " ") + " **the end**", ChunkDelay: 200 * time.Millisecond}
	}
	return fakellm.TextStep("ok")
}

// TestWebPageCSP: the page is served with its Content-Security-Policy,
// without a key, and the API behind it still asks for one.
func TestWebPageCSP(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(pageModel))
	defer model.Close()
	u := newUser(t, model.URL())
	_, base := u.apiServe()
	for _, path := range []string{"/", "/app.js", "/markdown.js", "/style.css"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		if resp.StatusCode != http.StatusOK || !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("GET %s: %d, Content-Security-Policy %q", path, resp.StatusCode, csp)
		}
	}
	if status, _ := apiRaw(t, http.MethodGet, base+"/v1/runs/run_1_x", "", nil); status != http.StatusUnauthorized {
		t.Errorf("GET /v1/runs without a key: %d, want 401", status)
	}
}

// TestWebPage drives the web chat page in headless Chromium: the key from
// the address, a streamed reply rendered as Markdown with its tool line,
// Stop, an approval, and a reload in the middle of a turn; the page runs
// with no CSP violation and no uncaught exception.
func TestWebPage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("drives a browser")
	}
	model := fakellm.New(fakellm.WithResponder(pageModel))
	defer model.Close()
	u := newUser(t, model.URL())
	_, base := u.apiServe()
	b := newBrowser(t)
	defer func() {
		if !t.Failed() {
			return
		}
		b.screenshot("web-page-failed.png")
		for _, r := range model.Requests() {
			if n := len(r.Body.Messages); n > 0 {
				m := r.Body.Messages[n-1]
				t.Logf("model request %d (%d tools): last message %s %q", r.Index, len(r.Body.Tools), m.Role, m.Content)
			}
		}
	}()

	// The key handed in the address is kept and leaves the address bar.
	b.do(30*time.Second, chromedp.Navigate(base+"/#key="+testAPIKey), chromedp.WaitVisible(chromedp.ID("input")))
	if got := eval[string](b, `localStorage.getItem("talaria.key")`); got != testAPIKey {
		t.Fatalf("stored key = %q", got)
	}
	if href := eval[string](b, `location.href`); strings.Contains(href, "key=") || strings.Contains(href, "#") {
		t.Fatalf("the key is still in the address: %s", href)
	}
	b.waitFor("the session list to load", `document.querySelector("#sessions li")`, 10*time.Second)
	if got := eval[string](b, `document.getElementById("sessions").textContent`); got != "No sessions yet" {
		t.Errorf("the session list of a new home shows %q", got)
	}

	// A reply streams in as Markdown, after the tool's progress line.
	send(b, "please run echo")
	b.waitFor("the tool line", `[...document.querySelectorAll(".msg.assistant .tool-line")].some(e => e.textContent.includes("terminal: echo hi"))`, 60*time.Second)
	b.waitFor("the rendered reply", `[...document.querySelectorAll(".msg.assistant strong")].some(e => e.textContent === "bold news")`, 60*time.Second)
	b.waitFor("the end of the turn", `document.getElementById("status").textContent === "Done" && document.getElementById("send").disabled === false`, 30*time.Second)
	session := eval[string](b, `localStorage.getItem("talaria.session") || ""`)
	b.waitFor("the session in the list", `document.querySelector("#sessions .session.current[data-id='`+session+`']")`, 10*time.Second)
	if got := eval[string](b, `document.querySelector(".msg.assistant .tool-line").textContent`); got != "terminal: echo hi — done" {
		t.Errorf("tool line = %q", got)
	}
	if got := eval[string](b, `document.querySelector(".msg.assistant code").textContent`); got != "inline code" {
		t.Errorf("inline code = %q", got)
	}
	if eval[bool](b, `document.querySelector(".msg.assistant").innerHTML.includes("**")`) {
		t.Error("the reply still shows Markdown asterisks")
	}
	// Markup in the model's text stays text; only http(s) links link.
	if got := eval[string](b, `[...document.querySelectorAll(".msg.assistant img, .msg.assistant script, .msg.assistant [onerror]")].length + " " + (window.pwned || 0)`); got != "0 0" {
		t.Errorf("the model's markup became elements: %s", got)
	}
	if got := eval[string](b, `[...document.querySelectorAll(".msg.assistant a")].map(a => a.getAttribute("href") + " " + a.rel).join("|")`); got != "https://example.com/docs noopener noreferrer" {
		t.Errorf("links = %q", got)
	}

	// Stop ends a turn whose model call hangs.
	send(b, "hang forever")
	b.waitFor("the Stop button", `!document.getElementById("run-controls").hidden && !document.getElementById("stop").disabled`, 30*time.Second)
	runID := eval[string](b, `localStorage.getItem("talaria.run") || ""`)
	if runID == "" {
		t.Fatal("no run id stored for the running turn")
	}
	waitModelRequests(t, model, "hang forever")
	stopped := time.Now()
	b.do(10*time.Second, chromedp.Click(chromedp.ID("stop")))
	b.waitFor("the interrupted status", `document.getElementById("status").textContent.includes("interrupted")`, 20*time.Second)
	t.Logf("stopped in %v", time.Since(stopped).Round(time.Millisecond))
	var r struct {
		Status     string `json:"status"`
		StopReason string `json:"stop_reason"`
	}
	if status := apiCall(t, http.MethodGet, base+"/v1/runs/"+runID, nil, &r); status != http.StatusOK || r.StopReason != "interrupted" {
		t.Errorf("GET /v1/runs/%s: %d %+v, want stop_reason interrupted", runID, status, r)
	}
	if got := eval[string](b, `localStorage.getItem("talaria.run") || ""`); got != "" {
		t.Errorf("the ended run is still stored: %q", got)
	}

	// A dangerous command waits for approval; Approve once runs it.
	scratch := filepath.Join(u.workdir, "scratch")
	if err := os.MkdirAll(filepath.Join(scratch, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	send(b, "clean up the scratch dir")
	b.waitFor("the approval", `!document.getElementById("approval").hidden`, 60*time.Second)
	if got := eval[string](b, `document.getElementById("approval-command").textContent`); got != "rm -rf ./scratch" {
		t.Errorf("approval command = %q", got)
	}
	if _, err := os.Stat(scratch); err != nil {
		t.Fatalf("scratch is gone before the approval: %v", err)
	}
	b.screenshot("web-page-approval.png")
	b.do(10*time.Second, chromedp.Click(chromedp.ID("approve-once")))
	b.waitFor("the approval to close", `document.getElementById("approval").hidden`, 20*time.Second)
	b.waitFor("the reply after the approval", `[...document.querySelectorAll(".msg.assistant strong")].some(e => e.textContent === "gone")`, 60*time.Second)
	b.waitFor("the end of the turn", `document.getElementById("status").textContent === "Done"`, 30*time.Second)
	if _, err := os.Stat(scratch); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("scratch after the approved rm -rf: %v", err)
	}
	if got := eval[string](b, `[...document.querySelectorAll(".msg.assistant")].pop().querySelector(".tool-line").textContent`); got != "terminal: rm -rf ./scratch — done" {
		t.Errorf("tool line = %q", got)
	}

	// A clarify question shows its choices; a choice answers it.
	send(b, "pick a colour for the button")
	b.waitFor("the question", `!document.getElementById("question").hidden`, 60*time.Second)
	if got := eval[string](b, `document.getElementById("question-text").textContent + " | " + [...document.querySelectorAll("#question-choices .choice")].map(e => e.textContent).join(",")`); got != "Which colour should the button be? | red,blue" {
		t.Errorf("question = %q", got)
	}
	b.do(10*time.Second, chromedp.Click(chromedp.CSS(`#question-choices .choice:nth-child(2)`)))
	b.waitFor("the reply after the answer", `[...document.querySelectorAll(".msg.assistant strong")].some(e => e.textContent === "noted")`, 60*time.Second)
	b.waitFor("the end of the turn", `document.getElementById("status").textContent === "Done" && document.getElementById("question").hidden`, 30*time.Second)

	// A reload in the middle of a turn shows what was seen and goes on.
	send(b, "tell me a long story")
	b.waitFor("the first words", `[...document.querySelectorAll(".msg.assistant")].pop().textContent.includes("word05")`, 60*time.Second)
	b.do(30*time.Second, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("input")))
	b.waitFor("the reconnected turn", `document.querySelector(".msg.assistant.streaming")`, 20*time.Second)
	if eval[bool](b, `[...document.querySelectorAll(".msg.assistant")].pop().textContent.includes("word40")`) {
		t.Fatal("the turn had ended before the reload had shown it: the test's turn is too fast")
	}
	b.waitFor("the rest of the reply", `[...document.querySelectorAll(".msg.assistant strong")].some(e => e.textContent === "the end")`, 60*time.Second)
	b.waitFor("the end of the turn", `document.getElementById("status").textContent === "Done"`, 30*time.Second)
	text := eval[string](b, `[...document.querySelectorAll(".msg.assistant")].pop().textContent`)
	for _, w := range []string{"word01 ", "word05 ", "word20 ", "word40 "} {
		if n := strings.Count(text, w); n != 1 {
			t.Errorf("%q appears %d times in the reconnected reply:\n%s", w, n, text)
		}
	}
	if n := eval[int](b, `document.querySelectorAll(".msg.user").length`); n < 1 {
		t.Errorf("the reloaded page shows %d user messages", n)
	}

	// New chat empties the page; the session in the list shows its
	// messages again, the reply rendered from the history.
	b.do(10*time.Second, chromedp.Click(chromedp.ID("new-chat")))
	if n := eval[int](b, `document.querySelectorAll("#messages .msg").length`); n != 0 {
		t.Errorf("a new chat shows %d messages", n)
	}
	b.do(10*time.Second, chromedp.Click(chromedp.CSS(`#sessions .session[data-id='`+session+`']`)))
	b.waitFor("the session's messages", `[...document.querySelectorAll(".msg.assistant strong")].some(e => e.textContent === "bold news")`, 20*time.Second)
	for _, want := range []string{"please run echo", "clean up the scratch dir", "tell me a long story"} {
		if !eval[bool](b, `[...document.querySelectorAll(".msg.user")].some(e => e.textContent.endsWith(`+jsString(want)+`))`) {
			t.Errorf("the session's messages lack the user's %q:\n%s", want, b.page())
		}
	}
	b.screenshot("web-page.png")

	// A narrow window: the session list folds away, nothing overflows.
	b.do(10*time.Second, chromedp.EmulateViewport(390, 760))
	b.waitFor("the narrow layout", `document.getElementById("toggle-sessions").offsetParent !== null && document.getElementById("sidebar").getBoundingClientRect().right <= 0`, 10*time.Second)
	if w := eval[int](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the narrow page is %dpx wide", w)
	}
	b.screenshot("web-page-narrow.png")
	if p := b.problems(); len(p) > 0 {
		t.Errorf("the page's console reported:\n%s", strings.Join(p, "\n"))
	}
}

// TestWebPageStoppedToolAfterReload: a tool killed by Stop shows as
// stopped, never as done: while the run ends, and after a reload, when the
// page rebuilds the turn from the stored messages.
func TestWebPageStoppedToolAfterReload(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a browser")
	}
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(pageModel))
	defer model.Close()
	u := newUser(t, model.URL())
	_, base := u.apiServe()
	b := newBrowser(t)
	defer func() {
		if t.Failed() {
			b.screenshot("web-page-stopped-tool-failed.png")
		}
	}()
	b.do(30*time.Second, chromedp.Navigate(base+"/#key="+testAPIKey), chromedp.WaitVisible(chromedp.ID("input")))
	send(b, "please sleep a while")
	b.waitFor("the running tool", `[...document.querySelectorAll(".msg.assistant .tool-line.running")].some(e => e.textContent === "running terminal: sleep 37.25")`, 60*time.Second)
	waitFor(t, time.Minute, func() bool { return exec.Command("pgrep", "-f", "sleep 37.25").Run() == nil })
	b.do(10*time.Second, chromedp.Click(chromedp.ID("stop")))
	b.waitFor("the interrupted status", `document.getElementById("status").textContent.includes("interrupted")`, 30*time.Second)
	lineState := `(() => { const l = [...document.querySelectorAll(".msg.assistant .tool-line")].pop();
		return l.className + " | " + l.textContent + " | " + getComputedStyle(l, "::before").content; })()`
	if got := eval[string](b, lineState); strings.Contains(got, "done") || strings.Contains(got, "✓") || strings.Contains(got, "running") {
		t.Errorf("the stopped tool's line as the run ends: %s", got)
	}
	session := eval[string](b, `localStorage.getItem("talaria.session") || ""`)

	// The stored result says how the call ended.
	var msgs struct {
		Data []struct {
			Role    string `json:"role"`
			Outcome string `json:"outcome"`
			Content string `json:"content"`
		} `json:"data"`
	}
	if status := apiCall(t, http.MethodGet, base+"/api/sessions/"+session+"/messages", nil, &msgs); status != http.StatusOK {
		t.Fatalf("GET the session's messages: %d", status)
	}
	outcomes := ""
	for _, m := range msgs.Data {
		if m.Role == "tool" {
			outcomes += m.Outcome + " "
		}
	}
	if outcomes != "stopped " {
		t.Errorf("the tool results' outcomes: %q (%+v)", outcomes, msgs.Data)
	}

	// A reload rebuilds the turn from the store: the call shows stopped.
	b.do(30*time.Second, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("input")))
	b.waitFor("the stored tool line", `document.querySelector(".msg.assistant .tool-line[data-outcome]")`, 20*time.Second)
	if got := eval[string](b, lineState); got != `tool-line stopped | terminal: sleep 37.25 — stopped | "■"` {
		t.Errorf("the stopped tool's line after a reload: %s", got)
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("the page's console reported:\n%s", strings.Join(p, "\n"))
	}
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// send types a message into the page and sends it.
func send(b *browser, text string) {
	b.t.Helper()
	b.waitFor("the Send button", `!document.getElementById("send").disabled`, 30*time.Second)
	b.do(10*time.Second, chromedp.SendKeys(chromedp.ID("input"), text), chromedp.Click(chromedp.ID("send")))
}

// waitModelRequests waits until the model got a request for the user's text.
func waitModelRequests(t *testing.T, model *fakellm.Server, text string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range model.Requests() {
			if len(r.Body.Tools) > 0 && strings.Contains(string(r.Raw), text) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the model got no request for %q", text)
}
