package gateway_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketelegram"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// TestResetAcrossTheBoundary (issue #34, criterion 4): with the gateway's
// clock in the test's hands, a chat's first message after 04:00 starts a
// new session linked to the one before, while a turn of the old session
// that runs across the boundary finishes there and its answer reaches the
// chat; a chat idle 24 hours starts the next one; /resume goes back to an
// earlier one on the same clock.
func TestResetAcrossTheBoundary(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		if strings.Contains(last.Content, "a slow task") {
			<-release // the turn runs across the boundary
			return fakellm.TextStep("slow task done")
		}
		var users []string
		for _, m := range req.Body.Messages {
			if m.Role == "user" {
				users = append(users, m.Content)
			}
		}
		return fakellm.TextStep("seen: " + strings.Join(users, " | "))
	}))
	defer model.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	tg := faketelegram.Start("9:token", "reset_bot")
	defer tg.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var mu sync.Mutex
	now := time.Date(2026, 12, 7, 3, 58, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(to time.Time) { mu.Lock(); defer mu.Unlock(); now = to }
	rt := runGateway(t, ctx, model, tg, func(o *gateway.Options) {
		o.Clock = clock
		o.Reset = &gateway.ResetPolicy{DailyHour: 4, Idle: 24 * time.Hour, Location: time.UTC}
	})
	reply := func(text string) {
		t.Helper()
		if _, err := tg.WaitSent(ctx, func(ms []faketelegram.Message) bool {
			for _, m := range ms {
				if strings.Contains(m.Text, text) {
					return true
				}
			}
			return false
		}); err != nil {
			t.Fatalf("no reply %q: %v\n%+v", text, err, tg.Sent())
		}
	}
	chat := func() (session, previous string, generation int) {
		t.Helper()
		c, ok, err := rt.Store.ChatState(ctx, "telegram:dm:5")
		if err != nil || !ok {
			t.Fatalf("chat state: %v, %v", ok, err)
		}
		return c.SessionID, c.Previous, c.Generation
	}

	tg.Send(5, 0, "a slow task")
	if err := model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	first, _, _ := chat()
	advance(time.Date(2026, 12, 7, 4, 1, 0, 0, time.UTC))
	tg.Send(5, 0, "hello")
	reply("seen: hello")
	if s, prev, gen := chat(); s == first || prev != first || gen != 1 {
		t.Fatalf("after 04:00: session %s (previous %s, generation %d); want a new one after %s", s, prev, gen, first)
	}
	second, _, _ := chat()
	close(release)
	reply("slow task done")
	for session, want := range map[string]bool{first: true, second: false} {
		msgs, err := rt.Store.Messages(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range msgs {
			found = found || (m.Role == "assistant" && m.Content == "slow task done")
		}
		if found != want {
			t.Errorf("session %s holds the slow turn's answer: %v, want %v", session, found, want)
		}
	}

	// A day without a message.
	advance(time.Date(2026, 12, 8, 3, 0, 0, 0, time.UTC))
	tg.Send(5, 0, "still here")
	reply("seen: hello | still here") // before 04:00 and not idle 24 h: same session
	advance(time.Date(2026, 12, 9, 3, 30, 0, 0, time.UTC))
	tg.Send(5, 0, "again")
	reply("seen: again")
	if s, prev, gen := chat(); prev != second || gen != 2 || s == second {
		t.Fatalf("after 24 idle hours: session %s (previous %s, generation %d); want the next after %s", s, prev, gen, second)
	}
	// /resume goes back, on the same clock: the next message stays there.
	tg.Send(5, 0, "/resume "+second)
	reply("Resumed " + second)
	tg.Send(5, 0, "back")
	reply("seen: hello | still here | back")
}
