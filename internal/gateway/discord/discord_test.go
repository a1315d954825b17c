package discord

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakediscord"
	"github.com/talaria-agent/talaria/internal/gateway"
)

const testToken = "MTAw.secret-bot-token"

func connect(t *testing.T) (*Discord, *fakediscord.Server) {
	t.Helper()
	fd := fakediscord.Start(testToken, "talaria")
	t.Cleanup(fd.Close)
	d, err := New(t.Context(), Options{APIURL: fd.URL(), Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	return d, fd
}

// poll polls until it gets n updates, taking none.
func poll(t *testing.T, d *Discord, n int) []gateway.Update {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		ups, err := d.Poll(ctx)
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		if len(ups) >= n {
			return ups
		}
	}
}

// waitConnected opens the Gateway connection (the first poll does) and
// waits for READY.
func waitConnected(t *testing.T, d *Discord, fd *fakediscord.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	go func() { _, _ = d.Poll(ctx) }()
	for !fd.Connected() {
		if ctx.Err() != nil {
			t.Fatal("the bot never connected")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRefusedToken(t *testing.T) {
	t.Parallel()
	fd := fakediscord.Start(testToken, "talaria")
	defer fd.Close()
	_, err := New(t.Context(), Options{APIURL: fd.URL(), Token: "wrong-token"})
	if !errors.Is(err, ErrRefused) || strings.Contains(err.Error(), "wrong-token") {
		t.Fatalf("err = %v", err)
	}
}

// TestDMAndMention: a DM is an update of its DM chat; a mention in a
// channel is one of the thread to start from it, and the reply starts
// that thread (named after the message) and goes in it; a message that
// does not mention the bot, and the bot's own messages, are not updates.
func TestDMAndMention(t *testing.T) {
	t.Parallel()
	d, fd := connect(t)
	if d.Account() != fakediscord.BotID || d.BotName() != "talaria" {
		t.Fatalf("account %q name %q", d.Account(), d.BotName())
	}
	waitConnected(t, d, fd)
	dm := fd.SendDM("42", "hello **there**")
	ch := fd.TextChannel()
	fd.Say("42", ch, "not for the bot")
	mention := fd.Mention("42", ch, "a question\nwith a second line")
	ups := poll(t, d, 2)
	if len(ups) != 2 {
		t.Fatalf("updates %+v", ups)
	}
	if u := ups[0]; u.ID != dm.ID || u.User != "42" || u.Text != "hello **there**" || u.Chat.Kind != gateway.ChatDM || u.Chat.ID != dm.ChannelID {
		t.Errorf("DM update %+v", u)
	}
	u := ups[1]
	if u.Text != "a question\nwith a second line" || u.Chat.Kind != gateway.ChatGroup || u.Chat.ID != ChatID(ch, mention.ID) {
		t.Fatalf("mention update %+v", u)
	}
	for _, up := range ups {
		if err := d.Ack(t.Context(), up); err != nil {
			t.Fatal(err)
		}
	}
	id, err := d.SendPart(t.Context(), gateway.Outgoing{ChatID: u.Chat.ID, ReplyTo: u.MessageID, Text: "x"}, "In the thread.")
	if err != nil {
		t.Fatal(err)
	}
	id2, err := d.SendPart(t.Context(), gateway.Outgoing{ChatID: u.Chat.ID}, "Again in the thread.")
	if err != nil {
		t.Fatal(err)
	}
	sent := fd.Sent()
	if len(sent) != 2 || sent[0].ID != id || sent[0].ChannelID != mention.ID || sent[1].ID != id2 || sent[1].ChannelID != mention.ID {
		t.Fatalf("sent %+v", sent)
	}
	if sent[0].AllowedMentions != `{"parse":[],"replied_user":false}` {
		t.Errorf("allowed mentions %s", sent[0].AllowedMentions)
	}
	// A mention inside the thread continues its chat.
	fd.Mention("42", mention.ID, "and another")
	ups = poll(t, d, 1)
	if ups[0].Chat.ID != u.Chat.ID || ups[0].Text != "and another" {
		t.Errorf("in the thread: %+v", ups[0])
	}
}

// TestRedeliveredOnce: an event delivered again before the gateway took
// it is one update; after it took it, none.
func TestRedeliveredOnce(t *testing.T) {
	t.Parallel()
	d, fd := connect(t)
	waitConnected(t, d, fd)
	m := fd.SendDM("42", "once")
	fd.Redeliver(m.ID)
	poll(t, d, 1)
	time.Sleep(200 * time.Millisecond) // room for the second delivery
	ups := poll(t, d, 1)
	if len(ups) != 1 {
		t.Fatalf("updates %+v", ups)
	}
	_ = d.Ack(t.Context(), ups[0])
	fd.Redeliver(m.ID)
	next := fd.SendDM("42", "twice")
	ups = poll(t, d, 1)
	if len(ups) != 1 || ups[0].ID != next.ID {
		t.Fatalf("after the ack: %+v", ups)
	}
}

// TestEditAndButtons: a message with buttons, edited without them; a
// press is deferred at once and answered into the message (done) or to
// the presser alone; an unknown message is ErrNotEditable; a short rate
// limit is waited out.
func TestEditAndButtons(t *testing.T) {
	t.Parallel()
	d, fd := connect(t)
	waitConnected(t, d, fd)
	dm := fd.DMChannel("42")
	rows := [][]gateway.Button{{{Text: "Approve once", Data: "ap:once:1"}, {Text: "Deny", Data: "ap:deny:1"}}}
	id, err := d.SendPart(t.Context(), gateway.Outgoing{ChatID: dm, Buttons: rows}, "Run `rm`?")
	if err != nil {
		t.Fatal(err)
	}
	fd.FailNext("editMessage", "ratelimited")
	if err := d.Edit(t.Context(), dm, id, "Run `rm -rf x`?", rows); err != nil {
		t.Fatal(err)
	}
	msg := fd.Sent()[0]
	if msg.Content != "Run `rm -rf x`?" || len(msg.Buttons) != 1 || msg.Buttons[0][1].CustomID != "ap:deny:1" {
		t.Fatalf("edited %+v", msg)
	}
	fd.Press("99", msg, "ap:once:1")
	fd.Press("42", msg, "ap:once:1")
	ups := poll(t, d, 2)
	if ups[0].Button != "ap:once:1" || ups[0].User != "99" || ups[0].MessageID != id || ups[0].Chat.ID != dm {
		t.Fatalf("press %+v", ups[0])
	}
	if err := d.AnswerButton(t.Context(), ups[0], "Not yours to press.", false); err != nil {
		t.Fatal(err)
	}
	if err := d.AnswerButton(t.Context(), ups[1], "Approved once.", true); err != nil {
		t.Fatal(err)
	}
	for _, a := range fd.Answered(id) {
		if !a {
			t.Errorf("a press was not answered: %v", fd.Answered(id))
		}
	}
	eph := fd.Ephemerals()
	if len(eph) != 1 || eph[0].Content != `Not yours to press\.` {
		t.Errorf("ephemerals %+v", eph)
	}
	msg = fd.Sent()[0]
	if len(msg.Buttons) != 0 || !strings.HasSuffix(msg.Content, `*Approved once\.*`) {
		t.Errorf("after the press %+v", msg)
	}
	if err := d.Edit(t.Context(), dm, "123", "x", nil); !errors.Is(err, gateway.ErrNotEditable) {
		t.Errorf("edit of an unknown message: %v", err)
	}
	if err := d.Typing(t.Context(), dm); err != nil {
		t.Error(err)
	}
}

// TestResume: a dropped connection is resumed, and what came meanwhile
// arrives once.
func TestResume(t *testing.T) {
	t.Parallel()
	d, fd := connect(t)
	waitConnected(t, d, fd)
	fd.SendDM("42", "before")
	ups := poll(t, d, 1)
	_ = d.Ack(t.Context(), ups[0])
	fd.Drop()
	m := fd.SendDM("42", "while away")
	ups = poll(t, d, 1)
	if len(ups) != 1 || ups[0].ID != m.ID {
		t.Fatalf("after the resume: %+v", ups)
	}
}

func TestComponents(t *testing.T) {
	t.Parallel()
	var rows [][]gateway.Button
	for i := range 12 {
		rows = append(rows, []gateway.Button{{Text: strings.Repeat("x", 100), Data: "q:" + string(rune('a'+i))}})
	}
	got := components(rows)
	if len(got) != 3 {
		t.Fatalf("%d rows, want 12 buttons packed 5 to a row", len(got))
	}
	if got := components(nil); got == nil || len(got) != 0 {
		t.Errorf("no buttons: %#v, want an empty list (it clears them)", got)
	}
	if topic("  first line\nsecond") != "first line" || topic("") != "Talaria" || len([]rune(topic(strings.Repeat("é", 200)))) != 80 {
		t.Error("topic")
	}
}
