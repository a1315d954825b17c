package gateway_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketelegram"
	"github.com/talaria-agent/talaria/internal/fakewire"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// TestSlowFileHoldsOnlyItsChat: while one chat's file cannot be
// downloaded (the platform does not answer), another chat's message is
// handed over and answered; the first chat's next message waits behind
// its file, and no acknowledgment passes the update not taken yet. Once
// the file comes, the first chat's two messages are answered in the order
// they were sent and every update is acknowledged.
func TestSlowFileHoldsOnlyItsChat(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	model := readingModel()
	defer model.Close()
	tg := faketelegram.Start("1:tok", "talaria_bot")
	defer tg.Close()
	runGateway(t, ctx, model, tg, func(o *gateway.Options) {
		o.Access = map[string]*gateway.Access{"telegram": {Users: []string{"5", "6"}}}
	})

	tg.HoldAfter("getFile", 0)
	file := tg.SendFile(5, faketelegram.DocumentFile, "notes.txt", "text/plain", []byte("the notes"), "see the file")
	if _, err := tg.WaitHeld(ctx, func(n int) bool { return n == 1 }); err != nil {
		t.Fatal("the file was never asked for")
	}
	after := tg.Send(5, 0, "after the file")
	other := tg.Send(6, 0, "hello from six")

	answered := func(chat int64, text string) func([]faketelegram.Message) bool {
		return func(ms []faketelegram.Message) bool {
			return slices.ContainsFunc(ms, func(m faketelegram.Message) bool {
				return m.ChatID == chat && strings.Contains(m.Text, "read: "+text)
			})
		}
	}
	if sent, err := tg.WaitSent(ctx, answered(6, "hello from six")); err != nil {
		t.Fatalf("the other chat was not answered while the file was held: %+v", sent)
	}
	if tg.Held() != 1 {
		t.Fatalf("%d getFile calls held, want the file's 1 still held", tg.Held())
	}
	if asked(model, "after the file") >= 0 {
		t.Fatal("the chat's second message was handed over before its file message")
	}
	// Two more polls: neither may acknowledge the file's update.
	polls := tg.Polls()
	if _, err := tg.WaitPolls(ctx, func(n int) bool { return n >= polls+2 }); err != nil {
		t.Fatal(err)
	}
	if c := tg.Confirmed(); c > file {
		t.Fatalf("offset %d acknowledged update %d, whose file is not taken", c, file)
	}

	tg.Release()
	for _, text := range []string{"see the file", "after the file"} {
		if sent, err := tg.WaitSent(ctx, answered(5, text)); err != nil {
			t.Fatalf("%q not answered: %+v", text, sent)
		}
	}
	if first, second := asked(model, "see the file"), asked(model, "after the file"); first < 0 || second < first {
		t.Fatalf("the chat's messages reached the model in the order %d, %d", first, second)
	}
	last := max(file, after, other)
	if _, err := fakewire.Wait(ctx, tg.Confirmed, func(c int64) bool { return c > last }); err != nil {
		t.Fatalf("updates up to %d not all acknowledged: offset %d", last, tg.Confirmed())
	}
}

// asked is the index of the first model request whose last message has
// text, or -1.
func asked(model *fakellm.Server, text string) int {
	for i, r := range model.Requests() {
		if last, ok := r.LastMessage(); ok && strings.Contains(last.Content, text) {
			return i
		}
	}
	return -1
}
