package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketelegram"
)

// TestTelegramDM: serve with a Telegram bot answers an allowed user's DM
// in the same chat, threaded to the message; a stranger gets one refusal
// and causes no model call; every update is acknowledged.
func TestTelegramDM(t *testing.T) {
	model := fakellm.New(fakellm.TextStep("Hello from **Talaria** <3"))
	defer model.Close()
	tg := faketelegram.Start("123:secret-token", "talaria_test_bot")
	defer tg.Close()
	u := newUser(t, model.URL())
	u.env["TELEGRAM_BOT_TOKEN"] = tg.Token
	u.env["TELEGRAM_API_URL"] = tg.URL()
	u.env["TELEGRAM_ALLOWED_USERS"] = "42, 43"
	s := u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")
	if out := serveOutput(s); !strings.Contains(out, "telegram @talaria_test_bot") || strings.Contains(out, tg.Token) {
		t.Fatalf("ready line:\n%s", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	tg.Send(99, 0, "let me in")
	tg.Send(99, 0, "please")
	tg.Send(42, 0, "hi there")
	sent, err := tg.WaitSent(ctx, func(m []faketelegram.Message) bool { return countTo(m, 42) >= 1 })
	if err != nil {
		t.Fatalf("no reply to the allowed user: %v (sent %+v)", err, sent)
	}
	var reply faketelegram.Message
	for _, m := range sent {
		if m.ChatID == 42 {
			reply = m
		}
	}
	if !strings.Contains(reply.Text, "Talaria") || !strings.Contains(reply.Text, "&lt;3") || reply.ReplyTo == 0 {
		t.Fatalf("reply %+v", reply)
	}
	if n := countTo(sent, 99); n != 1 {
		t.Errorf("the stranger got %d messages, want one refusal: %+v", n, sent)
	}
	if reqs := model.Requests(); len(reqs) != 1 || !strings.Contains(string(reqs[0].Raw), "hi there") {
		t.Errorf("model requests: %d, want only the allowed user's", len(reqs))
	}
	deadline := time.Now().Add(10 * time.Second)
	for tg.Pending() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := tg.Pending(); n != 0 {
		t.Errorf("%d updates not acknowledged", n)
	}
}

func countTo(msgs []faketelegram.Message, chat int64) int {
	n := 0
	for _, m := range msgs {
		if m.ChatID == chat {
			n++
		}
	}
	return n
}
