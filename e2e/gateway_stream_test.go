package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketelegram"
	"github.com/talaria-agent/talaria/internal/gateway/format"
)

// streamedMarkdown is a reply long enough to stream for several seconds in
// small pieces.
const streamedMarkdown = "Here is the plan, in **three** steps:\n\n" +
	"1. read `config.yaml` and check the *ports*;\n" +
	"2. restart the service & watch the logs;\n" +
	"3. tell you what changed.\n\n" +
	"That is all for now, see [the docs](https://example.com/docs)."

// slowStep streams text in pieces of 6 characters, 150 ms apart.
func slowStep(text string) fakellm.Step {
	return fakellm.Step{Text: text, ChunkSize: 6, ChunkDelay: 150 * time.Millisecond}
}

// rendered is text as the final reply shows it (one part).
func rendered(t *testing.T, md string) string {
	t.Helper()
	parts := format.Split(md, format.TelegramLimit, format.FlavourTelegramHTML)
	if len(parts) != 1 {
		t.Fatalf("the reply renders to %d parts", len(parts))
	}
	return parts[0]
}

// to42 is the messages sent to chat 42.
func to42(ms []faketelegram.Message) []faketelegram.Message {
	var out []faketelegram.Message
	for _, m := range ms {
		if m.ChatID == 42 {
			out = append(out, m)
		}
	}
	return out
}

// waitExact waits until a message to chat 42 is exactly text.
func waitExact(t *testing.T, tg *faketelegram.Server, text string, within time.Duration) faketelegram.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var found faketelegram.Message
	sent, err := tg.WaitSent(ctx, func(ms []faketelegram.Message) bool {
		for _, m := range to42(ms) {
			if m.Text == text {
				found = m
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no message %q within %s; sent:\n%+v", text, within, to42(sent))
	}
	return found
}

// checkEditRate fails when the edits of a message came, on average, less
// than about a second apart. The gateway paces them a second apart by its
// own clock (TestChatRate checks the pacing on a fake clock); what the
// fake sees adds each edit's time in transit, which load stretches for
// one edit and not the next, so two neighbours may land closer: over the
// whole span that shortens only the first gap and the last.
func checkEditRate(t *testing.T, tg *faketelegram.Server, id int64) {
	t.Helper()
	times := tg.EditTimes(id)
	if len(times) < 2 {
		return
	}
	span := times[len(times)-1].Sub(times[0])
	// wallclock: a lower bound on the mean gap of paced edits, spread over every gap (see above)
	if mean := span / time.Duration(len(times)-1); mean < 900*time.Millisecond {
		t.Errorf("%d edits of message %d over %s: %s apart on average, want a second", len(times), id, span, mean)
	}
}

// TestTelegramStreamedReply: a slowly streamed reply is one message, sent
// early and edited in place as the text grows (at most about once a
// second), whose last text is the whole rendered reply.
func TestTelegramStreamedReply(t *testing.T) {
	t.Parallel()
	model := fakellm.New(slowStep(streamedMarkdown))
	defer model.Close()
	_, tg, _ := telegramServe(t, model)
	want := rendered(t, streamedMarkdown)

	tg.Send(42, 0, "what is the plan?")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first, err := tg.WaitSent(ctx, func(ms []faketelegram.Message) bool { return len(to42(ms)) > 0 })
	if err != nil {
		t.Fatal("no draft")
	}
	if draft := to42(first)[0]; draft.Text == want || draft.ReplyTo == 0 {
		t.Errorf("the draft is not an early part of the reply, threaded: %+v", draft)
	}
	final := waitExact(t, tg, want, time.Minute)
	time.Sleep(1500 * time.Millisecond) // room for a stray edit or a second message
	msgs := to42(tg.Sent())
	if len(msgs) != 1 {
		t.Fatalf("%d messages for one reply: %+v", len(msgs), msgs)
	}
	if m := msgs[0]; m.ID != final.ID || m.Text != want || m.Edits < 2 || m.ParseMode != "HTML" {
		t.Errorf("the reply: %+v (want %d edits at least, text %q)", m, 2, want)
	}
	checkEditRate(t, tg, final.ID)
	t.Logf("%d edits over %s", msgs[0].Edits, streamedDuration(tg, final.ID))
}

func streamedDuration(tg *faketelegram.Server, id int64) time.Duration {
	times := tg.EditTimes(id)
	if len(times) < 2 {
		return 0
	}
	return times[len(times)-1].Sub(times[0]).Round(time.Millisecond)
}

// TestTelegramToolProgress: while a tool runs, the draft shows a status
// line naming it; the final reply, in the same message, has none.
func TestTelegramToolProgress(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "sl", Name: "terminal", Arguments: `{"command":"sleep 2"}`}),
		fakellm.TextStep("Slept **well**."),
	)
	defer model.Close()
	_, tg, _ := telegramServe(t, model)

	tg.Send(42, 0, "take a nap")
	draft := waitText(t, tg, "⏳ terminal: sleep 2", 30*time.Second)
	final := waitText(t, tg, "Slept <b>well</b>.", 30*time.Second)
	time.Sleep(1500 * time.Millisecond)
	msgs := to42(tg.Sent())
	if len(msgs) != 1 || final.ID != draft.ID {
		t.Fatalf("the draft %d and the reply %d are not one message: %+v", draft.ID, final.ID, msgs)
	}
	if m := msgs[0]; strings.Contains(m.Text, "⏳") || m.Text != "Slept <b>well</b>." {
		t.Errorf("the final reply: %q", m.Text)
	}
	checkEditRate(t, tg, final.ID)
}

// TestTelegramStreamCrash: serve SIGKILLed between two edits of a draft;
// after the restart the same message is edited on to the whole reply: the
// chat has one message for it, not two.
func TestTelegramStreamCrash(t *testing.T) {
	t.Parallel()
	long := streamedMarkdown + "\n\n" + streamedMarkdown
	model := fakellm.New(slowStep(long), slowStep(long))
	defer model.Close()
	u, tg, s := telegramServe(t, model)
	want := rendered(t, long)

	tg.Send(42, 0, "what is the plan, twice?")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := tg.WaitSent(ctx, func(ms []faketelegram.Message) bool {
		m := to42(ms)
		return len(m) > 0 && m[0].Edits >= 1
	}); err != nil {
		t.Fatalf("the draft was not edited: %+v", to42(tg.Sent()))
	}
	s.kill()
	before := to42(tg.Sent())
	if len(before) != 1 || before[0].Text == want {
		t.Fatalf("before the restart: %+v", before)
	}
	s = u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")
	final := waitExact(t, tg, want, 2*time.Minute)
	time.Sleep(2 * time.Second)
	msgs := to42(tg.Sent())
	if len(msgs) != 1 || final.ID != before[0].ID {
		t.Fatalf("%d messages for one reply (the draft was %d): %+v", len(msgs), before[0].ID, msgs)
	}
	if n := countText(tg.Sent(), "That is all for now"); n != 1 {
		t.Errorf("the reply is in %d messages", n)
	}
	_ = s
}
