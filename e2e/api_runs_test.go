package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// runInfo is GET /v1/runs/{id}.
type runInfo struct {
	RunID           string  `json:"run_id"`
	SessionID       string  `json:"session_id"`
	Status          string  `json:"status"`
	StopReason      string  `json:"stop_reason"`
	FinalText       *string `json:"final_text"`
	PendingApproval *struct {
		CallID  string `json:"call_id"`
		Command string `json:"command"`
	} `json:"pending_approval"`
}

// startRun posts a run and returns its id.
func startRun(t *testing.T, base string, body map[string]any) (string, string) {
	t.Helper()
	var started struct {
		RunID     string `json:"run_id"`
		SessionID string `json:"session_id"`
	}
	if status := apiCall(t, http.MethodPost, base+"/v1/runs", body, &started); status != http.StatusAccepted || started.RunID == "" {
		t.Fatalf("POST /v1/runs: %d %+v", status, started)
	}
	return started.RunID, started.SessionID
}

// waitRun polls a run until ok says so.
func waitRun(t *testing.T, base, id string, within time.Duration, ok func(runInfo) bool) runInfo {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var r runInfo
		status := apiCall(t, http.MethodGet, base+"/v1/runs/"+id, nil, &r)
		if status == http.StatusOK && ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: %d %+v after %s", id, status, r, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readUntil reads events until stop says so or the stream ends.
func readUntil(t *testing.T, s *sseStream, stop func(sseEvent) bool) []sseEvent {
	t.Helper()
	var out []sseEvent
	for {
		ev, ok := s.next()
		if !ok {
			return out
		}
		out = append(out, ev)
		if stop(ev) {
			return out
		}
	}
}

// checkSequence: ids strictly increasing, none twice, the stream ends with done.
func checkSequence(t *testing.T, evs []sseEvent) {
	t.Helper()
	last := int64(0)
	for i, ev := range evs {
		if ev.ID == "" {
			if ev.Event != "done" || i != len(evs)-1 {
				t.Fatalf("event %d (%s) has no id", i, ev.Event)
			}
			continue
		}
		n, err := strconv.ParseInt(ev.ID, 10, 64)
		if err != nil || n <= last {
			t.Fatalf("event %d id %q after %d: not increasing", i, ev.ID, last)
		}
		last = n
	}
	if len(evs) == 0 || evs[len(evs)-1].Event != "done" {
		t.Fatalf("the stream does not end with done: %+v", evs)
	}
}

func deltas(t *testing.T, evs []sseEvent) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range evs {
		if ev.Event == "delta" {
			var d struct{ Text string }
			if err := json.Unmarshal([]byte(ev.Data), &d); err != nil {
				t.Fatalf("delta data %q: %v", ev.Data, err)
			}
			b.WriteString(d.Text)
		}
	}
	return b.String()
}

func kinds(evs []sseEvent) string {
	var out []string
	for _, ev := range evs {
		if len(out) == 0 || out[len(out)-1] != ev.Event {
			out = append(out, ev.Event)
		}
	}
	return strings.Join(out, ",")
}

// TestRunsOverAPI: a run's events stream in order (tool start and end,
// then the reply's deltas, then done); a stream dropped mid-reply resumes
// with Last-Event-ID with no gap and no repeat; stop ends a hanging turn
// interrupted within 3 s; an approval the turn asks for is granted over
// the API, with serve SIGKILLed and restarted between the request and the
// grant, and the event stream resumed across the restart.
func TestRunsOverAPI(t *testing.T) {
	t.Parallel()
	reply := "Listed the files: one, two and three. Done now."
	slow := fakellm.TextStep(reply)
	slow.ChunkSize, slow.ChunkDelay = 4, 80*time.Millisecond
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "ls1", Name: "terminal", Arguments: `{"command":"echo one two three"}`}),
		slow,
		fakellm.Step{Hang: true},
		fakellm.ToolStep(fakellm.ToolCall{ID: "rm1", Name: "terminal", Arguments: `{"command":"rm -rf ./scratch"}`}),
		fakellm.TextStep("Deleted the scratch directory."),
	)
	defer model.Close()
	u := newUser(t, model.URL())
	port := freePort(t)
	s, base := u.apiServeOn(port)

	// 1. Events in order, a drop, a resume.
	id, session := startRun(t, base, map[string]any{"input": "list the files"})
	stream := openEvents(t, base+"/v1/runs/"+id+"/events", "")
	first := readUntil(t, stream, func(ev sseEvent) bool {
		return ev.Event == "delta" && len(deltas(t, []sseEvent{ev})) > 0 && ev.ID != ""
	})
	stream.close()
	if len(first) == 0 {
		t.Fatal("no event before the drop")
	}
	lastID := first[len(first)-1].ID
	resumed := openEvents(t, base+"/v1/runs/"+id+"/events", lastID)
	rest := readUntil(t, resumed, func(ev sseEvent) bool { return ev.Event == "done" })
	resumed.close()
	all := append(first, rest...)
	checkSequence(t, all)
	if got := deltas(t, all); got != reply {
		t.Fatalf("deltas across the resume = %q, want %q", got, reply)
	}
	// Each model call's events open with its attempt event.
	if k, want := kinds(all), "attempt,tool_start,tool_end,attempt,delta,done"; k != want {
		t.Fatalf("event kinds %s, want %s", k, want)
	}
	// The whole stream read again from the start is the same events.
	whole := openEvents(t, base+"/v1/runs/"+id+"/events", "")
	again := readUntil(t, whole, func(ev sseEvent) bool { return ev.Event == "done" })
	whole.close()
	if fmt.Sprint(again) != fmt.Sprint(all) {
		t.Fatalf("read again from the start:\n%v\nwant\n%v", again, all)
	}
	r := waitRun(t, base, id, 30*time.Second, func(r runInfo) bool { return r.Status == "completed" })
	if r.FinalText == nil || *r.FinalText != reply || r.SessionID != session {
		t.Fatalf("run = %+v", r)
	}

	// 2. Stop a hanging turn: interrupted within 3 s.
	id, _ = startRun(t, base, map[string]any{"input": "think forever", "session_id": session})
	if err := model.WaitRequests(t.Context(), 3); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	var stopAns map[string]string
	if status := apiCall(t, http.MethodPost, base+"/v1/runs/"+id+"/stop", nil, &stopAns); status != http.StatusAccepted {
		t.Fatalf("stop: %d %v", status, stopAns)
	}
	waitRun(t, base, id, 3*time.Second, func(r runInfo) bool { return r.Status == "interrupted" })
	t.Logf("stop to interrupted: %s", time.Since(stopped).Round(time.Millisecond))
	if status := apiCall(t, http.MethodPost, base+"/v1/runs/"+id+"/stop", nil, nil); status != http.StatusConflict {
		t.Errorf("stop of an ended run: %d, want 409", status)
	}

	// 3. An approval asked, serve killed, restarted, the approval granted.
	scratch := filepath.Join(u.workdir, "scratch")
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	id, _ = startRun(t, base, map[string]any{"input": "delete the scratch directory", "session_id": session})
	stream = openEvents(t, base+"/v1/runs/"+id+"/events", "")
	pending := waitRun(t, base, id, 30*time.Second, func(r runInfo) bool { return r.PendingApproval != nil })
	if !strings.Contains(pending.PendingApproval.Command, "rm -rf ./scratch") {
		t.Fatalf("pending approval %+v", pending.PendingApproval)
	}
	before := readUntil(t, stream, func(ev sseEvent) bool { return ev.Event == "approval" })
	s.kill()
	rest = readUntil(t, stream, func(sseEvent) bool { return false }) // ends with serve
	stream.close()
	before = append(before, rest...)
	s, base = u.apiServeOn(port)
	pending = waitRun(t, base, id, 60*time.Second, func(r runInfo) bool { return r.PendingApproval != nil })
	if _, err := os.Stat(scratch); err != nil {
		t.Fatalf("the command ran before it was approved: %v", err)
	}
	var decided map[string]string
	if status := apiCall(t, http.MethodPost, base+"/v1/runs/"+id+"/approval", map[string]string{"choice": "once"}, &decided); status != http.StatusAccepted {
		t.Fatalf("approval: %d %v", status, decided)
	}
	lastID = ""
	for _, ev := range before {
		if ev.ID != "" {
			lastID = ev.ID
		}
	}
	resumed = openEvents(t, base+"/v1/runs/"+id+"/events", lastID)
	after := readUntil(t, resumed, func(ev sseEvent) bool { return ev.Event == "done" })
	resumed.close()
	all = append(before, after...)
	checkSequence(t, all)
	if k := kinds(all); !strings.Contains(k, "approval,approval_decided,tool_start,tool_end") || !strings.HasSuffix(k, "done") {
		t.Fatalf("event kinds %s, want approval,approval_decided,tool_start,tool_end,...,done", k)
	}
	for _, ev := range all {
		if ev.Event == "approval_decided" && !strings.Contains(ev.Data, `"choice":"once"`) {
			t.Errorf("approval_decided %s, want choice once", ev.Data)
		}
		if ev.Event == "approval" && !strings.Contains(ev.Data, "rm -rf ./scratch") {
			t.Errorf("approval %s does not name the command", ev.Data)
		}
	}
	r = waitRun(t, base, id, 30*time.Second, func(r runInfo) bool { return r.Status == "completed" })
	if r.FinalText == nil || *r.FinalText != "Deleted the scratch directory." {
		t.Fatalf("run = %+v", r)
	}
	if _, err := os.Stat(scratch); !os.IsNotExist(err) {
		t.Fatalf("the approved command did not run: %v", err)
	}
	_ = s
}
