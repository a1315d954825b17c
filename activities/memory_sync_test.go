package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakememory"
	"github.com/talaria-agent/talaria/internal/memory"
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
	store, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.EnsureSession(ctx, "s", "m"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.AppendMessages(ctx, []models.Message{
		{SessionID: "s", TurnID: "turn/s/1", IdemKey: "q", Role: "user", Content: "what is my editor"},
		{SessionID: "s", TurnID: "turn/s/1", IdemKey: "a", Role: "assistant", Content: "Helix"},
	}); err != nil {
		t.Fatal(err)
	}
	fake := fakememory.NewMem0("k")
	defer fake.Close()
	p, err := memory.NewExternal(config.MemoryMem0, config.Endpoint{BaseURL: fake.URL(), APIKeyEnv: "K"},
		func(string) string { return "k" }, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
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
