package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	enums "go.temporal.io/api/enums/v1"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketelegram"
	"github.com/talaria-agent/talaria/internal/pgtest"
)

// oversubscribe runs perCore busy loops per core, each its own process,
// until the test ends: every process of the test competes for the CPU.
func oversubscribe(t *testing.T, perCore int) {
	t.Helper()
	for range perCore * runtime.NumCPU() {
		cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatalf("busy loop: %v", err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
}

// longEchoModel answers every request with "reply for " and the last user
// message, then a few sentences more, streamed in small pieces with a pause
// between them: a stream lasts a couple of seconds, long enough to be cut.
// The first request for a text that begins "door:" (asked of any model
// sharing cut) is cut after a few chunks, as a broken stream; a request
// without tools (a session's title) gets a short title.
func longEchoModel(cut *cutOnce) *fakellm.Server {
	return fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		if len(req.Body.Tools) == 0 {
			return fakellm.TextStep("Exactness")
		}
		last := lastUser(req)
		step := fakellm.Step{Text: longReply(last), ChunkSize: 12, ChunkDelay: 40 * time.Millisecond}
		if strings.HasPrefix(last, "door:") && cut.first(last) {
			step.BreakAfterChunks = 5
		}
		return step
	}))
}

// cutOnce remembers the texts whose first request was cut.
type cutOnce struct {
	mu   sync.Mutex
	seen map[string]bool
}

// first reports whether text is asked for the first time.
func (c *cutOnce) first(text string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	was := c.seen[text]
	c.seen[text] = true
	return !was
}

// longReply is longEchoModel's answer to text.
func longReply(text string) string {
	return "reply for " + text + ". " + strings.Repeat("Every word of this answer arrives once, in order, and only once. ", 5)
}

// streamOutcome is what one client of the load test saw.
type streamOutcome struct {
	text  string // the content the client assembled from the chunks
	err   error  // the stream's error, if it ended with one
	runID string
}

// TestScaleStreamsExactUnderLoad: with four busy loops per core, 100
// concurrent streaming completions through the official OpenAI SDK run on
// two workers (serve's own and a worker process, each calling its own copy
// of the model); the worker process is SIGKILLed while it streams, and a
// Telegram chat and the web page (Chromium) ask at the same time, their
// calls' first attempts cut. The chat's draft and the page show their
// answer once. Every
// client's text is the run's stored answer, or it ends with the documented
// retried_differently error and the answer stays readable; each run's
// /v1/runs events, folded as docs/api.md says (an attempt event starts the
// call's text over), are the answer once. The test reports the model
// requests per (turn, call): 1 for every call whose attempt did not fail,
// the calls whose attempt ran on the killed worker being the only ones
// asked again.
func TestScaleStreamsExactUnderLoad(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("100 concurrent turns on an oversubscribed machine")
	}
	const streams = 100
	dsn := pgtest.DSN(t, "exactload")
	var doors cutOnce
	serveModel, workerModel := longEchoModel(&doors), longEchoModel(&doors)
	defer serveModel.Close()
	defer workerModel.Close()

	oversubscribe(t, 4)
	temporalPort := freePort(t)
	host := newUser(t, serveModel.URL())
	host.env["TALARIA_DB"] = dsn
	// The default heartbeat timeout (10 s): a killed worker's calls move
	// after it, and a live worker's heartbeats are not outrun by the load.
	tg := faketelegram.Start("123:secret-token", "talaria_test_bot")
	defer tg.Close()
	host.env["TELEGRAM_BOT_TOKEN"], host.env["TELEGRAM_API_URL"], host.env["TELEGRAM_ALLOWED_USERS"] = tg.Token, tg.URL(), "42"
	srv, base := host.apiServe("--temporal-port", fmt.Sprint(temporalPort))
	defer func() {
		if t.Failed() {
			for _, l := range strings.Split(serveOutput(srv)+readLogIfAny(host, "serve"), "\n") {
				if strings.Contains(l, "eartbeat") {
					t.Log("serve: " + l)
				}
			}
		}
	}()
	cred := engine.CredentialPath(host.home)
	w := newUser(t, workerModel.URL())
	for k, v := range map[string]string{"TEMPORAL_ADDRESS": fmt.Sprintf("127.0.0.1:%d", temporalPort), "TALARIA_DB": dsn,
		"TEMPORAL_TLS_CERT": cred, "TEMPORAL_TLS_KEY": cred, "TEMPORAL_TLS_CA": cred,
		"TEMPORAL_TLS_SERVER_NAME": "localhost"} {
		w.env[k] = v
	}
	worker := w.daemon("talaria worker: ready", "worker")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out := make([]streamOutcome, streams)
	var wg sync.WaitGroup
	for i := range streams {
		wg.Go(func() {
			text, runID, err := streamSDK(t, base, fmt.Sprintf("request %03d of the exactness test", i))
			out[i] = streamOutcome{text: text, err: err, runID: runID}
		})
	}

	// A Telegram chat and the web page ask too; their calls' first attempts
	// are cut, whichever worker runs them.
	const fromChat, fromPage = "door: the chat's question", "door: the page's question"
	tg.Send(42, 0, fromChat)
	b := newBrowser(t)
	defer func() {
		if t.Failed() {
			b.screenshot("exact-load-failed.png")
		}
	}()
	b.do(time.Minute, chromedp.Navigate(base+"/#key="+testAPIKey), chromedp.WaitVisible(chromedp.ID("input")))
	send(b, fromPage)

	// The worker process is killed while it streams answers.
	if err := workerModel.WaitRequests(ctx, 5); err != nil {
		t.Fatalf("the worker process took no model call: %v", err)
	}
	waitFor(t, time.Minute, func() bool { return streamingNow(workerModel) > 0 })
	_ = worker.cmd.Process.Signal(syscall.SIGKILL)
	killed := time.Now()
	wg.Wait()

	// The chat's draft and the page show the answer once.
	chatAnswer := rendered(t, strings.TrimSpace(longReply(fromChat)))
	waitExact(t, tg, chatAnswer, 3*time.Minute)
	if msgs := to42(tg.Sent()); countText(msgs, "reply for "+fromChat) != 1 {
		t.Errorf("the chat shows the answer in %d messages: %+v", countText(msgs, "reply for "+fromChat), msgs)
	}
	b.waitFor("the end of the page's turn", `document.getElementById("status").textContent === "Done"`, 3*time.Minute)
	shown := eval[string](b, `[...[...document.querySelectorAll(".msg.assistant")].pop().querySelectorAll(".md")].map(e => e.textContent).join("")`)
	if want := strings.TrimSpace(longReply(fromPage)); strings.TrimSpace(shown) != want {
		t.Errorf("the page shows %q, want %q", shown, want)
	}

	// The calls whose attempt ran on the killed worker: asked of its model
	// before the kill. Such an attempt failed with its process, unless it
	// had completed (then the call was asked once); one that had its
	// answer but not yet stored it is asked again, rightly.
	onKilled := map[string]bool{}
	for _, r := range workerModel.Requests() {
		if r.Received.Before(killed) {
			onKilled[lastUser(r)] = true
		}
	}
	asked := map[string]int{}
	for _, m := range []*fakellm.Server{serveModel, workerModel} {
		for _, r := range m.Requests() {
			if len(r.Body.Tools) > 0 {
				asked[lastUser(r)]++
			}
		}
	}

	for _, door := range []string{fromChat, fromPage} {
		if asked[door] < 2 {
			t.Errorf("%q was asked %d times: its cut first attempt was not tried again", door, asked[door])
		}
	}
	histogram := map[int]int{}
	differently := 0
	for i, o := range out {
		text := fmt.Sprintf("request %03d of the exactness test", i)
		n := asked[text]
		histogram[n]++
		if n != 1 && !(onKilled[text] && n == 2) {
			t.Errorf("stream %d: the model was asked %d times for its one call (its attempt on the killed worker: %v); %s", i, n, onKilled[text],
				whyAskedAgain(t, host, o.runID, text, killed, map[string]*fakellm.Server{"serve": serveModel, "worker": workerModel}))
		}
		if o.runID == "" {
			t.Errorf("stream %d: no run id (%v)", i, o.err)
			continue
		}
		var r runInfo
		if status := apiCall(t, http.MethodGet, base+"/v1/runs/"+o.runID, nil, &r); status != http.StatusOK || r.FinalText == nil {
			t.Errorf("stream %d: run %s: %d %+v", i, o.runID, status, r)
			continue
		}
		// The stored answer is the model's text without the white space
		// around it.
		want := strings.TrimSpace(longReply(text))
		if *r.FinalText != want {
			t.Errorf("stream %d: stored answer %q, want %q", i, *r.FinalText, want)
		}
		switch {
		case o.err == nil && strings.TrimSpace(o.text) != *r.FinalText:
			t.Errorf("stream %d: the client read %q, the run answered %q", i, o.text, *r.FinalText)
		case o.err != nil && !strings.Contains(o.err.Error(), "retried_differently"):
			t.Errorf("stream %d: %v", i, o.err)
		case o.err != nil:
			differently++
			if strings.Count(o.text, "reply for ") > 1 {
				t.Errorf("stream %d: ended retried_differently after a repeat: %q", i, o.text)
			}
		}
		if got := strings.TrimSpace(foldedEvents(t, base, o.runID)); got != *r.FinalText {
			t.Errorf("stream %d: its run's events show %q, want %q", i, got, *r.FinalText)
		}
	}
	counts := make([]int, 0, len(histogram))
	for n := range histogram {
		counts = append(counts, n)
	}
	sort.Ints(counts)
	var report []string
	for _, n := range counts {
		report = append(report, fmt.Sprintf("%d call(s) asked %d time(s)", histogram[n], n))
	}
	t.Logf("model requests per (turn, call), 4 busy loops per core, a worker killed mid-stream: %s; %d calls had their attempt on the killed worker; %d streams ended retried_differently",
		strings.Join(report, ", "), len(onKilled), differently)
}

// streamingNow counts m's requests being answered now.
func streamingNow(m *fakellm.Server) int {
	n := 0
	for _, r := range m.Requests() {
		if r.Finished.IsZero() {
			n++
		}
	}
	return n
}

// lastUser is the last user message of a model request.
func lastUser(r fakellm.Request) string {
	last := ""
	for _, m := range r.Body.Messages {
		if m.Role == "user" {
			last = m.Content
		}
	}
	return last
}

// foldedEvents reads a finished run's events from the start and folds
// them as docs/api.md says a client shows them: deltas append to their
// call's text, and an attempt event starts its call's text over.
func foldedEvents(t *testing.T, base, runID string) string {
	t.Helper()
	s := openEvents(t, base+"/v1/runs/"+runID+"/events", "")
	defer s.close()
	evs := readUntil(t, s, func(ev sseEvent) bool { return ev.Event == "done" || ev.Event == "error" })
	var calls []int
	text := map[int]*strings.Builder{}
	call := 0
	for _, ev := range evs {
		switch ev.Event {
		case "attempt":
			var a struct{ Call, Attempt int }
			if err := json.Unmarshal([]byte(ev.Data), &a); err != nil {
				t.Fatalf("attempt event %q: %v", ev.Data, err)
			}
			call = a.Call
			if _, ok := text[call]; !ok {
				calls = append(calls, call)
			}
			text[call] = &strings.Builder{}
		case "delta":
			var d struct{ Text string }
			if err := json.Unmarshal([]byte(ev.Data), &d); err != nil {
				t.Fatalf("delta event %q: %v", ev.Data, err)
			}
			if text[call] == nil {
				calls = append(calls, call)
				text[call] = &strings.Builder{}
			}
			text[call].WriteString(d.Text)
		}
	}
	var b strings.Builder
	for _, c := range calls {
		b.WriteString(text[c].String())
	}
	return b.String()
}

// whyAskedAgain describes the model requests for text and the model call
// attempts of the run's workflow, as its history records them.
func whyAskedAgain(t *testing.T, host *user, runID, text string, killed time.Time, servers map[string]*fakellm.Server) string {
	var b strings.Builder
	for name, m := range servers {
		for _, r := range m.Requests() {
			if lastUser(r) == text {
				fmt.Fprintf(&b, "[%s request %d: received %s before the kill, finished %s, cancelled %v] ", name, r.Index,
					killed.Sub(r.Received).Round(time.Millisecond), r.Finished.Sub(r.Received).Round(time.Millisecond), r.Cancelled)
			}
		}
	}
	session, n, _ := strings.Cut(strings.TrimPrefix(runID, "run_"), "_")
	wf := "turn/" + n + "/" + session
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	iter := connectServe(t, host).Client.GetWorkflowHistory(ctx, wf, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			fmt.Fprintf(&b, "history of %s: %v", wf, err)
			break
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && a.GetAttempt() > 1 {
			fmt.Fprintf(&b, "[history: attempt %d started by %s after %q] ", a.GetAttempt(), a.GetIdentity(), a.GetLastFailure().GetMessage())
		}
	}
	return b.String()
}

// readLogIfAny is u's log of kind, or "" when there is none.
func readLogIfAny(u *user, kind string) string {
	data, _ := os.ReadFile(filepath.Join(u.home, "logs", kind+".log"))
	return string(data)
}
