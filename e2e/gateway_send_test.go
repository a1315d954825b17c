package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestTelegramSendMessage: a chat turn's send_message to this_chat reaches
// the chat once, besides the reply; one to another chat is refused and
// sends nothing there, and the model reads why.
func TestTelegramSendMessage(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(
			fakellm.ToolCall{ID: "s1", Name: "send_message", Arguments: `{"target":"this_chat","text":"ping from the tool"}`},
			fakellm.ToolCall{ID: "s2", Name: "send_message", Arguments: `{"target":"telegram:99","text":"ping elsewhere"}`},
		),
		fakellm.TextStep("Pinged you."),
	)
	defer model.Close()
	_, tg, _ := telegramServe(t, model)

	tg.Send(42, 0, "ping me")
	waitText(t, tg, "Pinged you.", time.Minute)
	waitTextIn(t, tg, 42, "ping from the tool", 10*time.Second)
	time.Sleep(2 * time.Second) // room for a duplicate to show
	sent := tg.Sent()
	if n := countText(sent, "ping from the tool"); n != 1 {
		t.Errorf("the tool's message was sent %d times: %+v", n, sent)
	}
	if n := countText(sent, "Pinged you."); n != 1 {
		t.Errorf("the reply was sent %d times: %+v", n, sent)
	}
	if n := countTo(sent, 99); n != 0 || countText(sent, "ping elsewhere") != 0 {
		t.Errorf("another chat got a message: %+v", sent)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model requests: %d, want 2", len(reqs))
	}
	var results []string
	for _, m := range reqs[1].Body.Messages {
		if m.Role == "tool" {
			results = append(results, m.ToolCallID+": "+m.Content)
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], "Sent to telegram:42") ||
		!strings.Contains(results[1], "neither the home chat nor this chat") {
		t.Errorf("tool results the model read: %q", results)
	}
}
