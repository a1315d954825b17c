package gateway_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketelegram"
	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/internal/gateway/telegram"
)

// TestChatMessageInProcess runs a chat message through a real engine (an
// embedded Temporal, a SQLite store, the turn worker) and the gateway with
// the fake Bot API: the reply arrives, and with TALARIA_RECORD_HISTORIES
// set, the ChatMessageWorkflow's history is kept in workflows/testdata for
// the replay tests (an existing file is kept: it is what older code ran;
// chat_message.json is the shape before change turn-end-signal).
func TestChatMessageInProcess(t *testing.T) {
	model := fakellm.New(fakellm.TextStep("Hello from the engine."))
	defer model.Close()
	tg := faketelegram.Start("9:token", "rec_bot")
	defer tg.Close()
	cfg := config.Default(t.TempDir())
	cfg.Model.BaseURL, cfg.Model.APIKey, cfg.Model.Name = model.URL(), "k", "fake-model"
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rt, err := engine.Start(ctx, cfg, engine.Options{Private: true, Worker: true, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	// The bot's requests end with the gateway (a long poll too).
	gctx, stop := context.WithCancel(ctx)
	bot, err := telegram.New(gctx, tg.URL(), tg.Token)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(gateway.Options{Runtime: rt, Config: cfg, Platforms: []gateway.Platform{bot},
		Access: map[string]*gateway.Access{"telegram": {Users: []string{"5"}}}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	done := make(chan struct{})
	go func() { defer close(done); g.Run(gctx) }()
	defer func() { stop(); <-done }()

	update := tg.Send(5, 0, "hello")
	if _, err := tg.WaitSent(ctx, func(m []faketelegram.Message) bool {
		for _, x := range m {
			if strings.Contains(x.Text, "Hello from the engine.") {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("no reply: %v %+v", err, tg.Sent())
	}
	id := "gateway/telegram/7000/" + strconv.FormatInt(update, 10)
	run := rt.Client.GetWorkflow(ctx, id, "")
	if err := run.Get(ctx, nil); err != nil {
		t.Fatalf("the chat message's workflow: %v", err)
	}
	if os.Getenv("TALARIA_RECORD_HISTORIES") == "" {
		return
	}
	path := filepath.Join("..", "..", "workflows", "testdata", "chat_message_signals.json")
	if _, err := os.Stat(path); err == nil && os.Getenv("TALARIA_RECORD_HISTORIES") != "overwrite" {
		t.Logf("kept %s", path)
		return
	}
	data, events, err := rt.HistoryJSON(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s (%d events)", path, events)
}
