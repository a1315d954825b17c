package gateway_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakeslack"
	"github.com/talaria-agent/talaria/internal/faketelegram"
	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/internal/gateway/slack"
	"github.com/talaria-agent/talaria/internal/gateway/telegram"
	"github.com/talaria-agent/talaria/models"
)

// approvalRows are buttons as an approval shows them.
var approvalRows = [][]gateway.Button{{{Text: "Approve once", Data: "ap:once:0123456789abcdef"}, {Text: "Deny", Data: "ap:deny:0123456789abcdef"}}}

func pressStore(t *testing.T, ctx context.Context) *models.Store {
	t.Helper()
	st, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestStrangersPressOnTelegram: a press on an approval's button in a
// group by a member who may not use the assistant is answered (the button
// stops spinning, with a notice), decides nothing, sends nothing to the
// group, and leaves the buttons for those who may press them.
func TestStrangersPressOnTelegram(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tg := faketelegram.Start("9:token", "press_bot")
	defer tg.Close()
	bot, err := telegram.New(ctx, tg.URL(), tg.Token)
	if err != nil {
		t.Fatal(err)
	}
	g := gateway.NewForTest(pressStore(t, ctx), map[string]*gateway.Access{"telegram": {Users: []string{"42"}}}, bot)
	if _, err := bot.SendPart(ctx, gateway.Outgoing{ChatID: "-1001", Buttons: approvalRows}, "Approve <code>rm -rf ./x</code>?"); err != nil {
		t.Fatal(err)
	}
	ask := tg.Sent()[0]
	update := tg.Press(99, ask, ask.Buttons[0][0].Data)
	ups, err := bot.Poll(ctx)
	if err != nil || len(ups) != 1 || ups[0].Button == "" || ups[0].User != "99" {
		t.Fatalf("the press: %+v %v", ups, err)
	}
	if err := g.Take(ctx, bot, ups[0]); err != nil {
		t.Fatal(err)
	}
	if a := tg.Answers(); len(a) != 1 || a[0].Update != update || a[0].Text != gateway.NoticeStranger {
		t.Errorf("the press was answered %+v, want once with %q", a, gateway.NoticeStranger)
	}
	if sent := tg.Sent(); len(sent) != 1 || len(sent[0].Buttons) != 1 || sent[0].Edits != 0 {
		t.Errorf("after a stranger's press the group has %+v, want the approval as it was", sent)
	}
	// A press that decided: answered, and the buttons go.
	update = tg.Press(42, ask, ask.Buttons[0][0].Data)
	if ups, err = bot.Poll(ctx); err != nil || len(ups) == 0 {
		t.Fatalf("the second press: %+v %v", ups, err)
	}
	press := ups[len(ups)-1]
	if err := bot.AnswerButton(ctx, press, "Approved once.", true); err != nil {
		t.Fatal(err)
	}
	if a := tg.Answers(); len(a) != 2 || a[1].Update != update || a[1].Text != "Approved once." {
		t.Errorf("the decided press was answered %+v", a)
	}
	if sent := tg.Sent(); len(sent) != 1 || len(sent[0].Buttons) != 0 || sent[0].Text != ask.Text {
		t.Errorf("after a decided press the group has %+v, want the approval without buttons", sent)
	}
	if err := bot.AnswerButton(ctx, press, "Approved once.", true); err != nil {
		t.Errorf("answering the press again: %v", err)
	}
}

// TestStrangersPressOnSlack: the same on Slack, where a press has no
// notice of its own: the stranger alone is told (an ephemeral message),
// and the approval keeps its buttons.
func TestStrangersPressOnSlack(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fs := fakeslack.Start("xoxb-1-bot", "xapp-1-app", "talaria")
	defer fs.Close()
	s, err := slack.New(ctx, slack.Options{APIURL: fs.URL(), BotToken: fs.BotToken, AppToken: fs.AppToken})
	if err != nil {
		t.Fatal(err)
	}
	g := gateway.NewForTest(pressStore(t, ctx), map[string]*gateway.Access{"slack": {Users: []string{"U42"}}}, s)
	if _, err := s.SendPart(ctx, gateway.Outgoing{ChatID: "C1", Buttons: approvalRows}, "Approve `rm -rf ./x`?"); err != nil {
		t.Fatal(err)
	}
	ask := fs.Sent()[0]
	fs.Press("U99", ask, ask.Buttons[0][0].Value)
	var ups []gateway.Update
	for len(ups) == 0 {
		if ups, err = s.Poll(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(ups) != 1 || ups[0].Button == "" || ups[0].User != "U99" {
		t.Fatalf("the press: %+v", ups)
	}
	if err := g.Take(ctx, s, ups[0]); err != nil {
		t.Fatal(err)
	}
	if e := fs.Ephemerals(); len(e) != 1 || e[0].User != "U99" || e[0].Channel != "C1" || !strings.Contains(e[0].Text, "Only the people allowed") {
		t.Errorf("the stranger was told %+v", e)
	}
	if sent := fs.Sent(); len(sent) != 1 || len(sent[0].Buttons) != 1 || sent[0].Edits != 0 {
		t.Errorf("after a stranger's press the channel has %+v, want the approval as it was", sent)
	}
}

func TestTextChoices(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rows [][]gateway.Button
		want string
	}{
		{approvalRows, "Reply /approve (Approve once), /deny."},
		{[][]gateway.Button{{{Text: "red", Data: "q:0:ab"}}, {{Text: "blue", Data: "q:1:ab"}}}, "Reply with one of: red, blue (or an answer of your own)."},
		{[][]gateway.Button{{{Text: "x", Data: "other"}}}, ""},
		{nil, ""},
	} {
		if got := gateway.TextChoices(c.rows); got != c.want {
			t.Errorf("TextChoices(%v) = %q, want %q", c.rows, got, c.want)
		}
	}
}
