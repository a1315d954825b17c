package slack

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakeslack"
	"github.com/talaria-agent/talaria/internal/gateway"
)

const (
	botToken = "xoxb-1-secret-bot"
	appToken = "xapp-1-secret-app"
)

func connect(t *testing.T) (*Slack, *fakeslack.Server, context.Context) {
	t.Helper()
	fs := fakeslack.Start(botToken, appToken, "talaria")
	t.Cleanup(fs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	s, err := New(ctx, Options{APIURL: fs.URL(), BotToken: botToken, AppToken: appToken})
	if err != nil {
		t.Fatal(err)
	}
	return s, fs, ctx
}

// poll polls until n updates came.
func poll(t *testing.T, ctx context.Context, s *Slack, n int) []gateway.Update {
	t.Helper()
	for {
		ups, err := s.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ups) >= n {
			return ups
		}
	}
}

// redelivered reports whether the fake delivered an envelope again.
func redelivered(fs *fakeslack.Server) bool {
	for _, e := range fs.Envelopes() {
		if e.RetryAttempt > 0 {
			return true
		}
	}
	return false
}

func TestDMAckedOnce(t *testing.T) {
	s, fs, ctx := connect(t)
	if s.Account() != fakeslack.TeamID+"."+fakeslack.BotUserID || s.BotName() != "talaria" {
		t.Fatalf("account %q name %q", s.Account(), s.BotName())
	}
	fs.RedeliverAfter(300 * time.Millisecond)
	fs.SendDM("U42", "D42", "hello <@"+fakeslack.BotUserID+">")
	ups := poll(t, ctx, s, 1)
	u := ups[0]
	if u.Text != "hello" || u.User != "U42" || u.Chat != (gateway.Chat{Platform: "slack", Kind: gateway.ChatDM, ID: "D42"}) || !strings.HasPrefix(u.ID, "Ev") {
		t.Fatalf("update %+v", u)
	}
	// Not acknowledged: Slack delivers it again, and it is the same update.
	for giveUp := time.Now().Add(time.Minute); !redelivered(fs); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(giveUp) {
			t.Fatalf("nothing delivered again within a minute: %+v", fs.Envelopes())
		}
	}
	ups = poll(t, ctx, s, 1)
	if len(ups) != 1 || ups[0].ID != u.ID {
		t.Fatalf("after a redelivery: %+v", ups)
	}
	if err := s.Ack(ctx, u); err != nil {
		t.Fatal(err)
	}
	// The bot's reply comes back as a message event, which is no update.
	id, err := s.SendPart(ctx, gateway.Outgoing{ChatID: u.Chat.ID, ReplyTo: u.MessageID}, s.Parts("Hi **there**")[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Edit(ctx, u.Chat.ID, id, s.Parts("Hi **again**")[0], nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for fs.Pending() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := fs.Pending(); n != 0 {
		t.Fatalf("%d events not acknowledged", n)
	}
	if bad := fs.BadAcks(); len(bad) > 0 {
		t.Errorf("acks of unknown envelopes: %v", bad)
	}
	if !redelivered(fs) {
		t.Errorf("no envelope was delivered again: %+v", fs.Envelopes())
	}
	sent := fs.Sent()
	if len(sent) != 1 || sent[0].Text != "Hi *again*" || sent[0].Edits != 1 || sent[0].Channel != "D42" || sent[0].ThreadTS != "" {
		t.Fatalf("sent %+v", sent)
	}
	ctx2, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if ups, err := s.Poll(ctx2); len(ups) != 0 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("after the ack: %+v %v", ups, err)
	}
}

func TestMentionThreadsAndButtons(t *testing.T) {
	s, fs, ctx := connect(t)
	ts := fs.Mention("U42", "C1", "/status", "")
	u := poll(t, ctx, s, 1)[0]
	if u.Text != "/status" || u.Chat.Kind != gateway.ChatGroup || u.Chat.ID != "C1:"+ts {
		t.Fatalf("mention %+v", u)
	}
	if err := s.Ack(ctx, u); err != nil {
		t.Fatal(err)
	}
	rows := [][]gateway.Button{{{Text: "Approve once", Data: "ap:once:abc"}, {Text: "Deny", Data: "ap:deny:abc"}}}
	id, err := s.SendPart(ctx, gateway.Outgoing{ChatID: u.Chat.ID, Buttons: rows}, "Approve `rm`?")
	if err != nil {
		t.Fatal(err)
	}
	m := fs.Sent()[0]
	if m.TS != id || m.ThreadTS != ts || len(m.Buttons) != 1 || m.Buttons[0][1].Value != "ap:deny:abc" {
		t.Fatalf("message %+v", m)
	}
	fs.Press("U42", m, "ap:deny:abc")
	p := poll(t, ctx, s, 1)[0]
	if p.Button != "ap:deny:abc" || p.User != "U42" || p.Chat.ID != u.Chat.ID || p.CallbackID == "" {
		t.Fatalf("press %+v", p)
	}
	if err := s.AnswerButton(ctx, p, "Denied.", true); err != nil {
		t.Fatal(err)
	}
	if err := s.Ack(ctx, p); err != nil {
		t.Fatal(err)
	}
	m = fs.Sent()[0]
	if len(m.Buttons) != 0 || !strings.Contains(m.Text, "_Denied._") || !strings.Contains(m.Text, "Approve `rm`?") {
		t.Fatalf("after the press: %+v", m)
	}
	if err := s.Edit(ctx, "C1", "1.000001", "x", nil); !errors.Is(err, gateway.ErrNotEditable) {
		t.Fatalf("edit of a missing message: %v", err)
	}
	fs.FailNext("chat.update", "ratelimited")
	if err := s.Edit(ctx, u.Chat.ID, id, "y", nil); err != nil {
		t.Fatalf("an edit rate limited once: %v", err)
	}
}

func TestTokensRefusedAndRedacted(t *testing.T) {
	fs := fakeslack.Start(botToken, appToken, "talaria")
	defer fs.Close()
	ctx := t.Context()
	_, err := New(ctx, Options{APIURL: fs.URL(), BotToken: "xoxb-wrong-bot", AppToken: appToken})
	if !errors.Is(err, ErrRefused) || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("a wrong bot token: %v", err)
	}
	s, err := New(ctx, Options{APIURL: fs.URL(), BotToken: botToken, AppToken: "xapp-wrong-app"})
	if err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = s.Poll(pctx)
	if !errors.Is(err, ErrRefused) || strings.Contains(err.Error(), "wrong-app") {
		t.Fatalf("a wrong app token: %v", err)
	}
	_, err = New(ctx, Options{APIURL: "http://127.0.0.1:9/api/", BotToken: botToken, AppToken: appToken})
	if err == nil || errors.Is(err, ErrRefused) || strings.Contains(err.Error(), "secret") {
		t.Fatalf("no Slack: %v", err)
	}
}
