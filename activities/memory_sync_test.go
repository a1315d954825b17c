package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/fakememory"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/memory"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

func TestFinishedTurn(t *testing.T) {
	t.Parallel()
	call := models.ToolCall{ID: "c1", Type: "function"}
	msgs := []models.Message{
		{TurnID: "t1", Role: "user", Content: "older"},
		{TurnID: "t2", Role: "user", Content: "the question"},
		{TurnID: "t2", Role: "assistant", ToolCalls: []models.ToolCall{call}},
		{TurnID: "t2", Role: "tool", Content: "a result"},
		{TurnID: "t2", Role: "user", Content: "a steer", Steer: true},
		{TurnID: "t2", Role: "assistant", Content: "the answer"},
	}
	got, ok := finishedTurn(msgs, "t2")
	if !ok || got.UserMessage != "the question" || got.Answer != "the answer" {
		t.Fatalf("finishedTurn: %+v %v", got, ok)
	}
	if _, ok := finishedTurn(msgs[:3], "t2"); ok {
		t.Fatal("a turn without an answer is recorded")
	}
	if got := sessionsOfTurn(turnapi.SyncMemoryInput{SessionID: "s", ActiveSessionID: "s"}); len(got) != 1 {
		t.Fatalf("sessionsOfTurn: %v", got)
	}
	if got := sessionsOfTurn(turnapi.SyncMemoryInput{SessionID: "s", ActiveSessionID: "s.1"}); len(got) != 2 {
		t.Fatalf("sessionsOfTurn after a compaction: %v", got)
	}
}

// TestSyncMemory: SyncMemory sends a turn's message and answer, read from
// a real SQLite store, to Mem0 (its fake over HTTP); with Mem0 down the
// activity succeeds and logs one warning naming the provider.
func TestSyncMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := editorTurn(t, "")
	fake := fakememory.NewMem0("k")
	defer fake.Close()
	p := mem0Provider(t, fake.URL())
	var logs bytes.Buffer
	a := &Activities{Store: store, Memory: p, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	in := turnapi.SyncMemoryInput{SessionID: "s", TurnID: "turn/s/1"}
	if err := a.SyncMemory(ctx, in); err != nil {
		t.Fatal(err)
	}
	adds := fake.RequestsTo("POST", "/v3/memories/add/")
	if len(adds) != 1 {
		t.Fatalf("%d adds, want 1", len(adds))
	}
	var body struct {
		Messages []struct{ Role, Content string } `json:"messages"`
		RunID    string                           `json:"run_id"`
	}
	if err := json.Unmarshal(adds[0].Body, &body); err != nil || body.RunID != "s" || len(body.Messages) != 2 ||
		body.Messages[0].Content != "what is my editor" || body.Messages[1].Content != "Helix" {
		t.Fatalf("the add: %s (%v)", adds[0].Body, err)
	}

	fake.Close()
	if err := a.SyncMemory(ctx, in); err != nil {
		t.Fatalf("a provider down fails the activity: %v", err)
	}
	if lines := strings.Count(logs.String(), "level=WARN"); lines != 1 || !strings.Contains(logs.String(), "provider=mem0") {
		t.Fatalf("logs with Mem0 down:\n%s", logs.String())
	}
	// Without a provider, nothing is done.
	if err := (&Activities{Store: store}).SyncMemory(ctx, in); err != nil {
		t.Fatal(err)
	}
}

func TestSessionEnd(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 1, 11, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	for _, tt := range []struct {
		name    string
		in      turnapi.SummarizeSessionInput
		summary string
		want    memory.SessionEnd
	}{
		{"a reason", turnapi.SummarizeSessionInput{SessionID: "s", Reason: "idle"}, "sum",
			memory.SessionEnd{SessionID: "s", Reason: memory.EndIdle, At: at.UTC(), Summary: "sum"}},
		{"a given text without a reason is a compaction", turnapi.SummarizeSessionInput{SessionID: "s", Text: "t"}, "t",
			memory.SessionEnd{SessionID: "s", Reason: memory.EndCompaction, At: at.UTC(), Summary: "t"}},
		{"no reason, no text, no summary", turnapi.SummarizeSessionInput{SessionID: "s"}, "",
			memory.SessionEnd{SessionID: "s", At: at.UTC()}},
	} {
		if got := sessionEnd(tt.in, tt.summary, at); got != tt.want {
			t.Errorf("%s: sessionEnd = %+v, want %+v", tt.name, got, tt.want)
		}
	}
	for _, tt := range []struct {
		turns, count int
		given        string
		want         bool
	}{{3, 3, "", true}, {4, 3, "", true}, {2, 3, "", false}, {3, 3, "a compaction's", false}} {
		if got := summarisedAlready(tt.turns, tt.count, tt.given); got != tt.want {
			t.Errorf("summarisedAlready(%d, %d, %q) = %v", tt.turns, tt.count, tt.given, got)
		}
	}
}

// endsHeard is a memory provider that records the session ends it is
// told of, failing them with fail.
type endsHeard struct {
	mu   sync.Mutex
	ends []memory.SessionEnd
	fail error
}

func (p *endsHeard) Name() string { return "heard" }
func (p *endsHeard) Prefetch(context.Context, memory.Query) (memory.Recall, error) {
	return memory.Recall{}, nil
}
func (p *endsHeard) Sync(context.Context, memory.Turn) error { return nil }
func (p *endsHeard) Forget(context.Context, string) error    { return nil }
func (p *endsHeard) Tools() []tools.Tool                     { return nil }
func (p *endsHeard) EndSession(_ context.Context, e memory.SessionEnd) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ends = append(p.ends, e)
	return p.fail
}

func (p *endsHeard) heard() []memory.SessionEnd {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.ends)
}

// summaryWorld is a SQLite store with the session "s" (a turn about
// Helix) and the session "empty" (no conversation), and a fake model
// whose every answer is summaryText.
func summaryWorld(t *testing.T) (*models.Store, *fakellm.Server, func(string) ([]llm.Endpoint, error)) {
	t.Helper()
	store, _ := editorTurn(t, "")
	if _, err := store.EnsureSession(t.Context(), "empty", "m"); err != nil {
		t.Fatal(err)
	}
	model := fakellm.New(fakellm.WithResponder(func(fakellm.Request) fakellm.Step { return fakellm.TextStep(summaryText) }))
	t.Cleanup(model.Close)
	return store, model, func(string) ([]llm.Endpoint, error) {
		return []llm.Endpoint{{BaseURL: model.URL(), APIKey: "k", Model: "m"}}, nil
	}
}

// summaryText is what summaryWorld's model summarises a session as.
const summaryText = "Topic: the user's editor. Facts: the user's editor is Helix."

// runSummary runs SummarizeSession as the worker does.
func runSummary(t *testing.T, a *Activities, in turnapi.SummarizeSessionInput) turnapi.SummarizeSessionResult {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a.SummarizeSession)
	val, err := env.ExecuteActivity(a.SummarizeSession, in)
	if err != nil {
		t.Fatalf("SummarizeSession %+v: %v", in, err)
	}
	var res turnapi.SummarizeSessionResult
	if err := val.Get(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSummarizeSessionTellsTheEnd: the provider is told of a session's
// end after its summary is known, with that summary: the one written
// now, the one stored when the session was summarised at its state
// already, a compaction's given one; a session without a conversation is
// told with none; a provider's failure is one warning line, never the
// activity's.
func TestSummarizeSessionTellsTheEnd(t *testing.T) {
	t.Parallel()
	store, model, providers := summaryWorld(t)
	heard := &endsHeard{}
	var logs bytes.Buffer
	a := &Activities{Store: store, Providers: providers, Memory: heard, Logger: slog.New(slog.NewTextHandler(&logs, nil))}

	steps := []struct {
		name    string
		in      turnapi.SummarizeSessionInput
		written bool
		want    memory.SessionEnd
	}{
		{"summarised now", turnapi.SummarizeSessionInput{SessionID: "s", Reason: "idle"}, true,
			memory.SessionEnd{SessionID: "s", Reason: memory.EndIdle, Summary: summaryText}},
		{"summarised already: the stored one", turnapi.SummarizeSessionInput{SessionID: "s", Reason: "reset"}, false,
			memory.SessionEnd{SessionID: "s", Reason: memory.EndReset, Summary: summaryText}},
		{"a compaction's summary", turnapi.SummarizeSessionInput{SessionID: "s", Text: "  Compacted: Helix.  ", Model: "m"}, true,
			memory.SessionEnd{SessionID: "s", Reason: memory.EndCompaction, Summary: "Compacted: Helix."}},
		{"no conversation", turnapi.SummarizeSessionInput{SessionID: "empty", Reason: "idle"}, false,
			memory.SessionEnd{SessionID: "empty", Reason: memory.EndIdle}},
	}
	for i, step := range steps {
		if res := runSummary(t, a, step.in); res.Written != step.written {
			t.Fatalf("%s: written %v, want %v", step.name, res.Written, step.written)
		}
		ends := heard.heard()
		if len(ends) != i+1 {
			t.Fatalf("%s: %d ends told, want %d", step.name, len(ends), i+1)
		}
		got := ends[i]
		if got.At.IsZero() || got.At.Location() != time.UTC {
			t.Fatalf("%s: the end is dated %v", step.name, got.At)
		}
		got.At = time.Time{}
		if got != step.want {
			t.Fatalf("%s: told %+v, want %+v", step.name, got, step.want)
		}
	}
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("the model was asked %d times, want once (the stored summary is reused)", n)
	}
	if logs.Len() != 0 {
		t.Fatalf("logs: %s", logs.String())
	}
	// The provider failing: one warning, the activity succeeds.
	heard.mu.Lock()
	heard.fail = errors.New("memory: provider unavailable: mem0 down")
	heard.mu.Unlock()
	runSummary(t, a, turnapi.SummarizeSessionInput{SessionID: "s", Reason: "idle"})
	if lines := strings.Count(logs.String(), "level=WARN"); lines != 1 || !strings.Contains(logs.String(), "provider=heard") {
		t.Fatalf("logs with the provider failing:\n%s", logs.String())
	}
	// A deleted session is not an end: nothing is told.
	runSummary(t, a, turnapi.SummarizeSessionInput{SessionID: "gone", Reason: "idle"})
	if n := len(heard.heard()); n != len(steps)+1 {
		t.Fatalf("%d ends told after a deleted session's, want %d", n, len(steps)+1)
	}
}

// TestSummarizeSessionSupermemory: over HTTP, the summary SummarizeSession
// writes reaches Supermemory (its fake) as the session's summary
// document; told again (a retry, or an end noticed twice), the same
// document is updated, not duplicated.
func TestSummarizeSessionSupermemory(t *testing.T) {
	t.Parallel()
	store, _, providers := summaryWorld(t)
	fake := fakememory.NewSupermemory("k")
	t.Cleanup(fake.Close)
	p, err := memory.NewExternal(config.MemorySupermemory, config.Endpoint{BaseURL: fake.URL(), APIKeyEnv: "K"},
		func(string) string { return "k" }, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &Activities{Store: store, Providers: providers, Memory: p}
	for range 2 {
		runSummary(t, a, turnapi.SummarizeSessionInput{SessionID: "s", Reason: "idle"})
	}
	sent := fake.RequestsTo("POST", "/v3/documents")
	if len(sent) != 2 {
		t.Fatalf("%d documents sent, want 2", len(sent))
	}
	var doc struct {
		Content, CustomID string
		Metadata          map[string]any
	}
	if err := sent[1].JSON(&doc); err != nil || doc.Content != summaryText || doc.CustomID != "summary-s" ||
		doc.Metadata["talaria_session"] != "s" || doc.Metadata["talaria_kind"] != memory.SummaryKind || sent[1].Auth != "Bearer k" {
		t.Fatalf("the summary document: %s (%v)", sent[1].Body, err)
	}
	if docs := fake.Documents(); len(docs) != 1 || docs[0].Content != summaryText {
		t.Fatalf("documents held: %+v", docs)
	}
	// Without a conversation, nothing is sent.
	runSummary(t, a, turnapi.SummarizeSessionInput{SessionID: "empty", Reason: "idle"})
	if n := len(fake.Requests()); n != 2 {
		t.Fatalf("%d requests after a session without a conversation, want 2", n)
	}
}

// editorTurn is a real SQLite store holding session "s" (the owner's, or
// the operator's when owner is "") with one answered turn, "turn/s/1",
// whose messages it returns.
func editorTurn(t *testing.T, owner string) (*models.Store, []models.Message) {
	t.Helper()
	ctx := t.Context()
	store, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if owner == "" {
		_, err = store.EnsureSession(ctx, "s", "m")
	} else {
		_, err = store.EnsureOwnedSession(ctx, "s", owner)
	}
	if err != nil {
		t.Fatal(err)
	}
	rows, err := store.AppendMessages(ctx, []models.Message{
		{SessionID: "s", TurnID: "turn/s/1", IdemKey: "q", Role: "user", Content: "what is my editor"},
		{SessionID: "s", TurnID: "turn/s/1", IdemKey: "a", Role: "assistant", Content: "Helix"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return store, rows
}

// mem0Provider is the Mem0 adapter over the fake at url, its key "k".
func mem0Provider(t *testing.T, url string) memory.Provider {
	t.Helper()
	p, err := memory.NewExternal(config.MemoryMem0, config.Endpoint{BaseURL: url, APIKeyEnv: "MEM0_KEY"},
		func(string) string { return "k" }, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
