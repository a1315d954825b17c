package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/compress"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// compactTask is the user's task: it must reach every model request, however
// often the conversation is compacted.
const compactTask = "TASK-7F3: migrate every one of the forty files in ./legacy to the new API"

// compactKeepLast keeps the tests' conversations short enough to compact
// after a few iterations.
const compactKeepLast = 4

// compactingModel reads files big-1.txt .. big-<reads>.txt one per call,
// then answers "done". A request made only of the summariser's instruction
// gets a structured summary (or, with failSummary, a server error). With
// overflowAbove set, a conversation request larger than that many bytes is
// refused as too long with overflowStatus.
type compactingModel struct {
	reads          int
	failSummary    bool
	overflowAbove  int
	overflowStatus int
	// overflowChars, when set, refuses conversation requests whose message
	// contents together are longer (tool schemas not counted).
	overflowChars int
	// onRead, when set, runs before the model asks for file n.
	onRead func(n int)

	mu        sync.Mutex
	done      int
	summaries int
}

func isSummaryRequest(req fakellm.Request) bool {
	m := req.Body.Messages
	return len(m) == 1 && strings.Contains(m[0].Content, "TRANSCRIPT TO SUMMARISE")
}

func (c *compactingModel) respond(req fakellm.Request) fakellm.Step {
	c.mu.Lock()
	defer c.mu.Unlock()
	if isSummaryRequest(req) {
		c.summaries++
		if c.failSummary {
			return fakellm.Step{Status: 500}
		}
		// Three sections only: the rest are filled in as "(none)".
		return fakellm.TextStep(fmt.Sprintf("Here it is.\n%s\n## Active Task\n- %s\n## Completed Actions\n- read %d files\n## Remaining Work\n- the rest",
			compress.SummaryHeader, compactTask, c.done))
	}
	last := req.Body.Messages[len(req.Body.Messages)-1]
	if last.Role == "user" && last.Content == "probe" {
		return fakellm.TextStep("ok")
	}
	if (c.overflowAbove > 0 && len(req.Raw) > c.overflowAbove) || (c.overflowChars > 0 && contentChars(req) > c.overflowChars) {
		return fakellm.Step{Status: c.overflowStatus, ErrorCode: "context_length_exceeded",
			ErrorMessage: "This model's maximum context length is exceeded. Please reduce the length of the messages."}
	}
	if len(req.Body.Tools) == 0 { // the summary call at the iteration cap
		return fakellm.TextStep("progress so far: some files read")
	}
	if c.done < c.reads {
		c.done++
		if c.onRead != nil {
			c.onRead(c.done)
		}
		return toolStep("read_file", fmt.Sprintf(`{"path":"big-%d.txt"}`, c.done))
	}
	return fakellm.TextStep("done")
}

// contentChars is the length of a request's message contents.
func contentChars(req fakellm.Request) int {
	n := 0
	for _, m := range req.Body.Messages {
		n += len(m.Content)
	}
	return n
}

// compactionRun is a runtime against a compactingModel, with files to read
// and the size of a conversation that holds only the system prompt, the tool
// schemas and a short message (in the model's tokens).
type compactionRun struct {
	*loopRun
	base int
}

func newCompactionRun(t *testing.T, m *compactingModel) *compactionRun {
	t.Helper()
	model := fakellm.New(fakellm.WithResponder(m.respond))
	t.Cleanup(model.Close)
	run := &loopRun{t: t, model: model, workdir: t.TempDir(), rt: startRuntime(t, model, func(c *config.Config, _ *Options) {
		c.Compression.KeepLast = compactKeepLast
	})}
	for i := 1; i <= m.reads; i++ {
		var b strings.Builder
		for line := 0; line < 30; line++ {
			fmt.Fprintf(&b, "file %d line %d: %s\n", i, line, strings.Repeat("abcdefgh", 8))
		}
		if err := os.WriteFile(filepath.Join(run.workdir, fmt.Sprintf("big-%d.txt", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run.turn("probe-session", "probe")
	return &compactionRun{loopRun: run, base: (len(model.Requests()[0].Raw) + 3) / 4}
}

// lineage returns the sessions of session's lineage, checking each child
// names its parent.
func (r *compactionRun) lineage(session string) []models.Session {
	r.t.Helper()
	line, err := r.rt.Store.Lineage(context.Background(), session)
	if err != nil {
		r.t.Fatal(err)
	}
	for i := 1; i < len(line); i++ {
		if line[i].ParentSessionID != line[i-1].ID || line[i].LineageID != session {
			r.t.Fatalf("session %s: parent %q lineage %q, want parent %s lineage %s",
				line[i].ID, line[i].ParentSessionID, line[i].LineageID, line[i-1].ID, session)
		}
	}
	return line
}

// checkCompactedSessions checks every session of the lineage: tool calls
// answered right after their call, and in each child one summary with every
// section that keeps the task, right after the verbatim head.
func (r *compactionRun) checkCompactedSessions(line []models.Session) {
	r.t.Helper()
	for i, s := range line {
		msgs := r.transcript(s.ID)
		assertAnswered(r.t, msgs)
		if msgs[0].Role != "user" || msgs[0].Content != compactTask {
			r.t.Fatalf("session %s does not start with the task: %q", s.ID, msgs[0].Content)
		}
		if i == 0 {
			continue
		}
		var summaries []string
		for _, m := range msgs {
			if strings.HasPrefix(m.Content, compress.SummaryHeader) {
				summaries = append(summaries, m.Content)
			}
		}
		if len(summaries) != 1 {
			r.t.Fatalf("session %s has %d summaries, want 1", s.ID, len(summaries))
		}
		for _, sec := range compress.Sections {
			if !strings.Contains(summaries[0], "## "+sec+"\n") {
				r.t.Fatalf("session %s: summary lacks section %q:\n%s", s.ID, sec, summaries[0])
			}
		}
		if !strings.Contains(summaries[0], compactTask) {
			r.t.Fatalf("session %s: the summary lost the task:\n%s", s.ID, summaries[0])
		}
	}
}

// conversationRequests are the requests of session's turns (not the
// summariser's, not the probe's), with the summariser's requests counted
// before each.
func (r *compactionRun) conversationRequests() (reqs []fakellm.Request, summariesBefore []int) {
	n := 0
	for _, req := range r.model.Requests() {
		switch {
		case isSummaryRequest(req):
			n++
		case strings.Contains(string(req.Raw), compactTask):
			reqs = append(reqs, req)
			summariesBefore = append(summariesBefore, n)
		}
	}
	return reqs, summariesBefore
}

// TestCompactionKeepsTheTask (issue: context, criterion 2): a long scripted
// conversation crosses the threshold again and again; each time the middle
// becomes a summary in a new child session, tool pairs stay intact, the
// next request is below the threshold, the task reaches every request, a
// later summary updates the earlier one, and nothing is deleted.
func TestCompactionKeepsTheTask(t *testing.T) {
	t.Parallel()
	m := &compactingModel{reads: 12}
	r := newCompactionRun(t, m)
	// The identity changes once the session's prompt is stored: only a
	// compaction rebuilds the prompt, so only the children carry it.
	const newIdentity = "You are Talaria, rebuilt after compaction."
	m.onRead = func(n int) {
		if n == 1 {
			if err := os.WriteFile(filepath.Join(r.rt.Config.Home, "SOUL.md"), []byte(newIdentity), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	threshold := r.base + 4500
	res := r.turn("long", compactTask, func(in *workflows.TurnInput) {
		in.Compaction = workflows.CompactionSettings{Threshold: threshold, OverflowAttempts: 3, Cooldown: time.Minute}
	})
	if !res.Completed || res.FinalResponse == nil || *res.FinalResponse != "done" {
		t.Fatalf("turn: %+v", res)
	}
	if res.Compactions < 2 {
		t.Fatalf("%d compactions, want at least 2 (threshold %d)", res.Compactions, threshold)
	}
	t.Logf("base %d tokens, threshold %d: %d compactions in %d model calls", r.base, threshold, res.Compactions, res.APICalls)
	line := r.lineage("long")
	if len(line) != res.Compactions+1 || res.ActiveSessionID != line[len(line)-1].ID {
		t.Fatalf("lineage %d sessions, active %s, after %d compactions", len(line), res.ActiveSessionID, res.Compactions)
	}
	r.checkCompactedSessions(line)
	for i, s := range line {
		if got := strings.Contains(s.SystemPrompt, newIdentity); got != (i > 0) {
			t.Fatalf("session %s: prompt rebuilt = %v, want %v", s.ID, got, i > 0)
		}
	}

	reqs, before := r.conversationRequests()
	for i, req := range reqs {
		if i > 0 && before[i] > before[i-1] {
			if size := (len(req.Raw) + 3) / 4; size >= threshold {
				t.Errorf("request %d right after compaction %d is %d tokens, threshold %d", i, before[i], size, threshold)
			}
		}
	}
	evs, err := r.rt.Store.EventsAfter(context.Background(), res.TurnID, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	status := 0
	for _, ev := range evs {
		if ev.Kind == "status" && strings.Contains(ev.Data, "continued in session "+r.lineage("long")[1].ID) {
			status++
		}
	}
	if status != 1 {
		t.Fatalf("%d live status events name the first compaction's session, want 1", status)
	}
	if got := m.summaries; got != res.Compactions {
		t.Fatalf("%d summaries written for %d compactions", got, res.Compactions)
	}
	later := 0
	for _, req := range r.model.Requests() {
		if isSummaryRequest(req) && strings.Contains(req.Body.Messages[0].Content, "PREVIOUS SUMMARY") {
			later++
		}
	}
	if later != res.Compactions-1 {
		t.Fatalf("%d summary requests updated a previous summary, want %d", later, res.Compactions-1)
	}

	// Nothing is lost: every file's result is in some session, and the
	// root keeps every message it had.
	all := ""
	for _, s := range line {
		for _, msg := range r.transcript(s.ID) {
			all += msg.Content
		}
	}
	for i := 1; i <= m.reads; i++ {
		if !strings.Contains(all, fmt.Sprintf("file %d line 0:", i)) {
			t.Fatalf("the result of big-%d.txt is in no session of the lineage", i)
		}
	}
	if root := r.transcript("long"); !strings.Contains(root[len(root)-1].Content, "file") || len(root) < 9 {
		t.Fatalf("the root session lost messages: %d left", len(root))
	}

	// The next turns go on in the newest session, whichever session of the
	// conversation they name: one coordinator, one turn numbering.
	tip := line[len(line)-1].ID
	for i, name := range []string{"long", tip} {
		next := r.turn(name, "probe")
		if next.SessionID != "long" || next.ActiveSessionID != tip || *next.FinalResponse != "ok" ||
			next.TurnID != workflows.TurnWorkflowID("long", i+2) {
			t.Fatalf("turn %d naming %s: %+v", i+2, name, next)
		}
	}
}

// TestContextOverflowCompacts (issue: context, criterion 3): the provider
// refuses a request as too long (413, or 400 context_length_exceeded); the
// turn compacts and the call succeeds. Without overflow attempts the refusal
// fails the turn with the provider's message.
func TestContextOverflowCompacts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		status   int
		attempts int
	}{
		{"413", 413, 3},
		{"400 context_length_exceeded", 400, 3},
		{"no attempts", 413, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &compactingModel{reads: 8, overflowStatus: c.status}
			r := newCompactionRun(t, m)
			m.mu.Lock()
			m.overflowAbove = 4*r.base + 14000
			m.mu.Unlock()
			res := r.turn("big", compactTask, func(in *workflows.TurnInput) {
				in.Compaction = workflows.CompactionSettings{OverflowAttempts: c.attempts, Cooldown: time.Minute}
			})
			refused := 0
			for _, req := range r.model.Requests() {
				if req.Status == c.status {
					refused++
				}
			}
			t.Logf("%d refused, %d compactions, %d model calls", refused, res.Compactions, res.APICalls)
			if refused == 0 {
				t.Fatal("no request was refused: the conversation never grew past the limit")
			}
			if c.attempts == 0 {
				if !res.Failed || res.Error == nil || !strings.Contains(*res.Error, "maximum context length") {
					t.Fatalf("turn: %+v", res)
				}
				return
			}
			if !res.Completed || *res.FinalResponse != "done" || res.Compactions < 1 {
				t.Fatalf("turn: %+v (refused %d)", res, refused)
			}
			if res.Compactions != refused {
				t.Fatalf("%d compactions for %d refusals", res.Compactions, refused)
			}
			r.checkCompactedSessions(r.lineage("big"))
		})
	}
}

// TestSummariserFailureKeepsTheTask: when the summarising call fails, the
// compaction uses the static summary (task and tools kept), and during the
// cooldown later compactions do not call the summariser again.
func TestSummariserFailureKeepsTheTask(t *testing.T) {
	t.Parallel()
	m := &compactingModel{reads: 12, failSummary: true}
	r := newCompactionRun(t, m)
	res := r.turn("failing", compactTask, func(in *workflows.TurnInput) {
		in.Compaction = workflows.CompactionSettings{Threshold: r.base + 4500, OverflowAttempts: 3, Cooldown: time.Hour}
	})
	if !res.Completed || res.Compactions < 2 {
		t.Fatalf("turn: %+v", res)
	}
	if m.summaries != 1 {
		t.Fatalf("the summariser was called %d times, want once (then the cooldown)", m.summaries)
	}
	line := r.lineage("failing")
	r.checkCompactedSessions(line)
	for _, s := range line[1:] {
		for _, msg := range r.transcript(s.ID) {
			if strings.HasPrefix(msg.Content, compress.SummaryHeader) && !strings.Contains(msg.Content, "read_file (") {
				t.Fatalf("static summary of %s does not list the tools used:\n%s", s.ID, msg.Content)
			}
		}
	}
}

// TestRecordCompactionHistories records turns that compact (before a call,
// and after a refused call) for the replay tests, like TestRecordHistories.
func TestRecordCompactionHistories(t *testing.T) {
	t.Parallel()
	mode := recordingMode(t)
	for _, c := range []struct {
		file          string
		overflow      bool
		maxIterations int
	}{
		{"turn_compaction_preflight.json", false, 0},
		{"turn_compaction_overflow.json", true, 0},
		// The budget runs out when the context passes the threshold: the
		// compaction comes before the summary call.
		{"turn_compaction_at_cap.json", false, 7},
	} {
		t.Run(c.file, func(t *testing.T) {
			keepRecorded(t, mode, c.file)
			m := &compactingModel{reads: 8, overflowStatus: 413}
			r := newCompactionRun(t, m)
			settings := workflows.CompactionSettings{Threshold: r.base + 4500, OverflowAttempts: 3, Cooldown: time.Minute}
			if c.overflow {
				settings.Threshold = 0
				m.mu.Lock()
				m.overflowAbove = 4*r.base + 14000
				m.mu.Unlock()
			}
			res := r.turn("rec", compactTask, func(in *workflows.TurnInput) {
				in.Compaction, in.MaxIterations = settings, c.maxIterations
			})
			if res.Compactions == 0 || (c.maxIterations > 0 && res.TurnExitReason != workflows.StopMaxIterations) {
				t.Fatalf("no compaction or no cap: %+v", res)
			}
			record(t, r.rt, res.TurnID, c.file)
		})
	}
}

// TestGraceCallOverflowCompacts: the summary call made when the iteration
// budget is spent carries the largest context; refused as too long, it is
// answered by a compaction and made again.
func TestGraceCallOverflowCompacts(t *testing.T) {
	t.Parallel()
	m := &compactingModel{reads: 8, overflowStatus: 413}
	r := newCompactionRun(t, m)
	// Each file read adds ~3,000 characters: the 5th call carries 4 reads,
	// the summary call after it 5.
	m.mu.Lock()
	m.overflowChars = contentChars(r.model.Requests()[0]) + 13500
	m.mu.Unlock()
	res := r.turn("grace", compactTask, func(in *workflows.TurnInput) {
		in.MaxIterations = 5
		in.Compaction = workflows.CompactionSettings{OverflowAttempts: 3, Cooldown: time.Minute}
	})
	if res.TurnExitReason != workflows.StopMaxIterations || res.FinalResponse == nil ||
		*res.FinalResponse != "progress so far: some files read" || res.Compactions != 1 {
		t.Fatalf("turn: %+v", res)
	}
	for _, req := range r.model.Requests() {
		if req.Status == 413 && len(req.Body.Tools) > 0 {
			t.Fatal("a call before the summary call was refused: the test no longer reaches the grace call's path")
		}
	}
	r.checkCompactedSessions(r.lineage("grace"))
}

// TestConversationOfASession: any session of a line of compactions maps to
// its first session; a child whose parent is gone maps to itself.
func TestConversationOfASession(t *testing.T) {
	t.Parallel()
	model := fakellm.New()
	defer model.Close()
	rt := startRuntime(t, model)
	ctx := context.Background()
	if _, err := rt.Store.NextTurn(ctx, "root", "m", ""); err != nil {
		t.Fatal(err)
	}
	parent := "root"
	for range 2 {
		child, err := rt.Store.CompactSession(ctx, parent, "p", nil)
		if err != nil {
			t.Fatal(err)
		}
		parent = child.ID
	}
	for id, want := range map[string]string{"root": "root", "root~1": "root", "root~2": "root", "unknown": "unknown"} {
		if got, err := rt.Conversation(ctx, id); err != nil || got != want {
			t.Errorf("Conversation(%s) = %s, %v; want %s", id, got, err, want)
		}
	}
	if err := rt.Store.DeleteSession(ctx, "root"); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"root~1": "root~1", "root~2": "root~1"} {
		if got, err := rt.Conversation(ctx, id); err != nil || got != want {
			t.Errorf("after deleting root: Conversation(%s) = %s, %v; want %s", id, got, err, want)
		}
	}
}
