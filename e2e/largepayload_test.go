package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	enums "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/workflows"
)

// maxHistoryEvent is the test's bound on one history event (the design
// keeps every payload under 64 KiB; Temporal refuses 2 MiB).
const maxHistoryEvent = 256 << 10

// bigText is n bytes of words.
func bigText(seed string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s-%d ", seed, i)
	}
	return b.String()[:n]
}

// TestLargePayloadsStayOutOfHistory: a 10 MB final reply completes and
// prints in full (as text and as --json), a 10 MB terminal output reaches
// the model as its capped head and tail with the rest kept in a file, and
// a 100-call batch completes; no event of any of these workflows' histories
// is above 256 KB. The kept output is in the session's own directory of
// $TALARIA_HOME/outputs, readable by that session only, and goes when the
// session is deleted.
func TestLargePayloadsStayOutOfHistory(t *testing.T) {
	t.Parallel()
	const size = 10 << 20
	textReply, jsonReply := bigText("text", size), bigText("json", size)
	batch := make([]fakellm.ToolCall, 100)
	for i := range batch {
		batch[i] = fakellm.ToolCall{ID: fmt.Sprintf("call_%03d_%s", i, strings.Repeat("x", 100)), Name: "read_file", Arguments: `{"path":"notes.txt"}`}
	}
	// The model answers each request by what it asks, so a call asked
	// again (an attempt a busy machine's server gave up on) gets the same
	// answer.
	readBack := readBackKeptOutput()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		switch {
		case last.Role == openai.ChatMessageRoleUser && strings.Contains(last.Content, "write a lot again"):
			return fakellm.Step{Text: jsonReply, ChunkSize: 256 << 10}
		case last.Role == openai.ChatMessageRoleUser && strings.Contains(last.Content, "write a lot"):
			return fakellm.Step{Text: textReply, ChunkSize: 256 << 10}
		case last.Role == openai.ChatMessageRoleUser && strings.Contains(last.Content, "read it a hundred times"):
			return fakellm.ToolStep(batch...)
		case last.Role == openai.ChatMessageRoleTool && strings.HasPrefix(last.ToolCallID, "call_"):
			return fakellm.TextStep("read it a hundred times")
		case last.Role == openai.ChatMessageRoleUser && strings.Contains(last.Content, "print a lot"):
			return fakellm.ToolStep(fakellm.ToolCall{ID: "big_out", Name: "terminal", Arguments: `{"command":"head -c 10000000 /dev/zero | tr '\\0' a"}`})
		}
		return readBack(req)
	}))
	defer model.Close()
	u := newUser(t, model.URL())
	writeConfig("approvals:\n  mode: off\n")(t, u)
	if err := os.WriteFile(filepath.Join(u.workdir, "notes.txt"), []byte("a short note\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u.serve(freePort(t))

	// A 10 MB answer, printed as text.
	stdout, stderr, code := u.run(3*time.Minute, "chat", "-q", "write a lot", "--session", "big-text")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, textReply) {
		t.Fatalf("stdout (%d bytes) does not hold the whole %d-byte answer; stderr:\n%s", len(stdout), size, stderr)
	}

	// A 10 MB answer, as --json: final_response is whole.
	res, stderr, code := u.chatJSON(3*time.Minute, "-q", "write a lot again", "--session", "big-json")
	if code != 0 || !res.Completed || res.FinalResponse == nil {
		t.Fatalf("exit %d, %+v\nstderr:\n%s", code, res.TurnExitReason, stderr)
	}
	if *res.FinalResponse != jsonReply || res.FinalClipped {
		t.Fatalf("final_response has %d bytes (clipped %v), want the whole %d", len(*res.FinalResponse), res.FinalClipped, size)
	}

	// A batch of 100 calls: every call id answered once.
	res, stderr, code = u.chatJSON(3*time.Minute, "-q", "read it a hundred times", "--session", "batch")
	if code != 0 || !res.Completed {
		t.Fatalf("exit %d, %s\nstderr:\n%s", code, res.TurnExitReason, stderr)
	}
	answered := map[string]int{}
	for _, m := range requestAnswering(t, model, batch[0].ID).Messages {
		if m.Role == openai.ChatMessageRoleTool {
			answered[m.ToolCallID]++
		}
	}
	for _, c := range batch {
		if answered[c.ID] != 1 {
			t.Fatalf("call %s answered %d times", c.ID, answered[c.ID])
		}
	}

	// A 10 MB terminal output: the model reads its head and tail only.
	res, stderr, code = u.chatJSON(3*time.Minute, "-q", "print a lot", "--session", "big-tool")
	if code != 0 || !res.Completed {
		t.Fatalf("exit %d, %s\nstderr:\n%s", code, res.TurnExitReason, stderr)
	}
	toolMsg := toolAnswer(t, model, "big_out")
	if len(toolMsg) > tools.DefaultMaxOutputChars+1000 {
		t.Fatalf("the model got a tool result of %d bytes, above the cap", len(toolMsg))
	}
	var term struct {
		Output     string `json:"output"`
		FullOutput string `json:"full_output"`
	}
	if err := json.Unmarshal([]byte(toolMsg), &term); err != nil || term.FullOutput == "" || !strings.Contains(term.Output, term.FullOutput) {
		t.Fatalf("the result does not name the kept output (%v):\n%.600s", err, toolMsg)
	}
	if info, err := os.Stat(term.FullOutput); err != nil || info.Size() != 10_000_000 || info.Mode() != 0o600 {
		t.Fatalf("kept output %s: %v (%v)", term.FullOutput, info, err)
	}
	if dir := filepath.Join(u.home, "outputs", "big-tool"); filepath.Dir(term.FullOutput) != dir {
		t.Fatalf("kept output %s is not in the session's directory %s", term.FullOutput, dir)
	}
	// The model reads the kept output back with read_file.
	if back := toolAnswer(t, model, "read_back"); !strings.Contains(back, strings.Repeat("a", 1000)) {
		t.Fatalf("read_file of the kept output answered:\n%.600s", back)
	}
	// Another session may not read it.
	if _, stderr, code := u.chatJSON(3*time.Minute, "-q", "snoop", "--session", "snoop"); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	if got := toolAnswer(t, model, "snoop_read"); !strings.Contains(got, "reads only its own kept outputs") || strings.Contains(got, "aaaa") {
		t.Fatalf("another session's read_file of the kept output answered:\n%.600s", got)
	}

	// No event of these workflows' histories is large.
	ids := []string{}
	for _, s := range []string{"big-text", "big-json", "big-tool", "batch"} {
		ids = append(ids, workflows.SessionWorkflowID(s), workflows.TurnWorkflowID(s, 1))
	}
	largest := assertSmallHistories(t, u, ids)
	t.Logf("largest history event: %d bytes", largest)

	// Deleting the session removes what it kept.
	if _, stderr, code := u.run(time.Minute, "sessions", "rm", "big-tool"); code != 0 {
		t.Fatalf("sessions rm: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Dir(term.FullOutput)); !os.IsNotExist(err) {
		t.Fatalf("the deleted session's kept outputs stay: %v", err)
	}
}

// readBackKeptOutput answers the result of call big_out with a read_file
// of the file it names, and that read with a text answer; the message
// "snoop" (another session) gets a read_file of the same file.
func readBackKeptOutput() func(fakellm.Request) fakellm.Step {
	var mu sync.Mutex
	kept := ""
	return func(req fakellm.Request) fakellm.Step {
		mu.Lock()
		defer mu.Unlock()
		last, _ := req.LastMessage()
		switch {
		case last.Role == openai.ChatMessageRoleTool && last.ToolCallID == "big_out":
			var term struct {
				FullOutput string `json:"full_output"`
			}
			_ = json.Unmarshal([]byte(last.Content), &term)
			kept = term.FullOutput
			args, _ := json.Marshal(map[string]any{"path": term.FullOutput, "offset": 1, "limit": 1})
			return fakellm.ToolStep(fakellm.ToolCall{ID: "read_back", Name: "read_file", Arguments: string(args)})
		case last.Role == openai.ChatMessageRoleUser && strings.Contains(last.Content, "snoop"):
			args, _ := json.Marshal(map[string]any{"path": kept, "offset": 1, "limit": 1})
			return fakellm.ToolStep(fakellm.ToolCall{ID: "snoop_read", Name: "read_file", Arguments: string(args)})
		}
		return fakellm.TextStep("the output was long")
	}
}

// requestAnswering is the first request to the model that carries the
// result of call id.
func requestAnswering(t *testing.T, model *fakellm.Server, id string) openai.ChatCompletionRequest {
	t.Helper()
	for _, r := range model.Requests() {
		for _, m := range r.Body.Messages {
			if m.Role == openai.ChatMessageRoleTool && m.ToolCallID == id {
				return r.Body
			}
		}
	}
	for _, r := range model.Requests() {
		last, _ := r.LastMessage()
		t.Logf("request %d: %d messages, last %s %.80q", r.Index, len(r.Body.Messages), last.Role, last.Content)
	}
	t.Fatalf("no request carries the result of %s", id)
	return openai.ChatCompletionRequest{}
}

// toolAnswer is the result of call id as the model received it.
func toolAnswer(t *testing.T, model *fakellm.Server, id string) string {
	t.Helper()
	for _, m := range requestAnswering(t, model, id).Messages {
		if m.Role == openai.ChatMessageRoleTool && m.ToolCallID == id {
			return m.Content
		}
	}
	return ""
}

// assertSmallHistories reads the workflows' histories from the user's
// serve and fails on an event above maxHistoryEvent; it returns the
// largest event's size.
func assertSmallHistories(t *testing.T, u *user, workflowIDs []string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := config.Load(u.home, func(k string) string { return u.env[k] })
	if err != nil {
		t.Fatal(err)
	}
	info, err := engine.ReadServeInfo(u.home)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := engine.Connect(ctx, cfg, info, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	largest := 0
	for _, id := range workflowIDs {
		iter := rt.Client.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		events := 0
		for iter.HasNext() {
			ev, err := iter.Next()
			if err != nil {
				t.Fatalf("history of %s: %v", id, err)
			}
			events++
			n := proto.Size(ev)
			largest = max(largest, n)
			if n > maxHistoryEvent {
				t.Errorf("%s: event %d (%s) takes %d bytes, above %d", id, ev.GetEventId(), ev.GetEventType(), n, maxHistoryEvent)
			}
		}
		if events == 0 {
			t.Errorf("%s: no history", id)
		}
	}
	return largest
}
