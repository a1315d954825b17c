package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketelegram"
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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rt := runGateway(t, ctx, model, tg, nil)

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
