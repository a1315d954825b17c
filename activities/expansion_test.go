package activities

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/fakememory"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/memory"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// recallStore is a real SQLite store with two past sessions summarised
// and a probe session whose turn asks, in words neither summary holds,
// about one of them.
func recallStore(t *testing.T) (*models.Store, []models.Message) {
	t.Helper()
	ctx := context.Background()
	store, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	for id, sum := range map[string]string{
		"k8s":   "Topic: kubernetes pod crash loop. Fact: the image lacked its config file.",
		"bread": "Topic: sourdough starter care. Decision: feed the starter twice a day.",
	} {
		if _, err := store.EnsureSession(ctx, id, "m"); err != nil {
			t.Fatal(err)
		}
		if err := store.PutSummary(ctx, models.SessionSummary{SessionID: id, Summary: sum, Turns: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.EnsureSession(ctx, "probe", "m"); err != nil {
		t.Fatal(err)
	}
	rows, err := store.AppendMessages(ctx, []models.Message{{SessionID: "probe", TurnID: "turn/probe/1", IdemKey: "q",
		Role: "user", Content: "My deployment keeps dying after each rollout"}})
	if err != nil {
		t.Fatal(err)
	}
	return store, rows
}

// TestRecallExpansion: with an auxiliary model (a fake speaking the OpenAI
// API), recall also searches the questions it writes, and finds the past
// session the message shares no word with; its usage is recorded. When
// the auxiliary model fails, recall searches with the message alone and
// the call goes on, with one warning.
func TestRecallExpansion(t *testing.T) {
	t.Parallel()
	aux := fakellm.New(fakellm.WithSteps(
		fakellm.ErrorStep(500, "the auxiliary model is down"),
		fakellm.TextStep("Here are three questions:\n1. Why does my kubernetes pod crash?\n2. How do I stop a crash loop?\n3. What restarts a container?"),
	))
	defer aux.Close()
	for _, tt := range []struct {
		name       string
		wantRecall bool
		wantWarn   string
	}{
		{"the auxiliary model fails: the message alone finds nothing", false, "the auxiliary model wrote no questions"},
		{"its questions find the past session", true, ""},
	} {
		store, history := recallStore(t)
		var logs bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logs, nil))
		a := &Activities{Store: store, Logger: logger, Memory: memory.NewRecall(store, nil, logger),
			RecallBudget: time.Minute, Auxiliary: &llm.Endpoint{Wire: llm.WireOpenAI, BaseURL: aux.URL(), Model: "small"}}
		block, used := a.recallFor(context.Background(), turnapi.CallModelInput{SessionID: "probe", TurnID: "turn/probe/1", Call: 1}, history)
		if (used.PromptTokens > 0) != tt.wantRecall {
			t.Fatalf("%s: the turn is told of %+v used", tt.name, used)
		}
		if got := strings.Contains(block, "session k8s"); got != tt.wantRecall || strings.Contains(block, "sourdough") {
			t.Fatalf("%s: block %q", tt.name, block)
		}
		if tt.wantWarn != "" && !strings.Contains(logs.String(), tt.wantWarn) {
			t.Fatalf("%s: no warning %q in\n%s", tt.name, tt.wantWarn, logs.String())
		}
		if !tt.wantRecall {
			continue
		}
		usage, err := store.Usage(context.Background(), models.UsageFilter{SessionID: "probe"})
		if err != nil || len(usage) != 1 || usage[0].Model != "small" || usage[0].Calls != 1 {
			t.Fatalf("the auxiliary call's usage: %+v %v", usage, err)
		}
	}
	reqs := aux.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the auxiliary model was asked %d times, want 2", len(reqs))
	}
	if last, _ := reqs[1].LastMessage(); !strings.Contains(last.Content, memory.ExpansionPrompt) ||
		!strings.Contains(last.Content, "My deployment keeps dying") {
		t.Fatalf("the auxiliary model was asked %q", last.Content)
	}
}

// TestRecallExpansionOnlyWhereSearched: an external provider does not
// search expansions, so the auxiliary model is never asked for them.
func TestRecallExpansionOnlyWhereSearched(t *testing.T) {
	t.Parallel()
	aux := fakellm.New(fakellm.WithSteps(fakellm.TextStep("never asked")))
	defer aux.Close()
	fake := fakememory.NewMem0("k")
	defer fake.Close()
	store, history := recallStore(t)
	p := mem0Provider(t, fake.URL())
	a := &Activities{Store: store, Memory: p, RecallBudget: time.Minute,
		Auxiliary: &llm.Endpoint{Wire: llm.WireOpenAI, BaseURL: aux.URL(), Model: "small"}}
	a.recallFor(context.Background(), turnapi.CallModelInput{SessionID: "probe", TurnID: "turn/probe/1", Call: 1}, history)
	if n := len(aux.Requests()); n != 0 {
		t.Fatalf("the auxiliary model was asked %d times for a provider that does not search expansions", n)
	}
	if n := len(fake.RequestsTo("POST", "/v3/memories/search/")); n != 1 {
		t.Fatalf("%d searches, want 1", n)
	}
}

// TestSkippedPrefetchNotice: a provider slower than the budget, or down,
// costs the call nothing but one warning and one status event the doors
// show; the turn's retries carry the same (empty) block and tell nothing
// again.
func TestSkippedPrefetchNotice(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		slow  bool
		words string
	}{
		{"slow", true, "did not answer within 50ms"},
		{"down", false, "failed (see the log)"},
	} {
		fake := fakememory.NewMem0("k")
		if tt.slow {
			fake.Stall()
		} else {
			fake.Close()
		}
		store, history := recallStore(t)
		p := mem0Provider(t, fake.URL())
		var logs bytes.Buffer
		a := &Activities{Store: store, Memory: p, RecallBudget: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
		in := turnapi.CallModelInput{SessionID: "probe", TurnID: "turn/probe/1", Call: 1}
		for range 2 { // the call and its retry
			if block, _ := a.recallFor(context.Background(), in, history); block != "" {
				t.Fatalf("%s: block %q", tt.name, block)
			}
		}
		evs, err := store.EventsAfter(context.Background(), in.TurnID, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Kind != events.KindStatus || !strings.Contains(evs[0].Data, tt.words) || !strings.Contains(evs[0].Data, "mem0") {
			t.Fatalf("%s: events %+v, want one status naming mem0 and %q", tt.name, evs, tt.words)
		}
		if n := strings.Count(logs.String(), "recall: the prefetch"); n != 1 {
			t.Fatalf("%s: %d warnings, want 1:\n%s", tt.name, n, logs.String())
		}
		fake.Close()
	}
}
