package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/fakeslack"
	"github.com/talaria-agent/talaria/internal/faketelegram"
	"github.com/talaria-agent/talaria/internal/gateway/format"
	"github.com/talaria-agent/talaria/workflows"
)

// longAnswer is a Markdown answer of exactly n characters: numbered
// paragraphs ("Step 001.") with some markup, so that each can be found in
// the chat, in order.
func longAnswer(n int) string {
	const end = "That is all"
	var b strings.Builder
	for i := 1; ; i++ {
		p := fmt.Sprintf("**Step %03d.** Read `part_%03d.go`, check the *ports* & the logs, then write down what changed and why it matters.\n\n", i, i)
		if b.Len()+len(p)+len(end)+1 > n {
			break
		}
		b.WriteString(p)
	}
	b.WriteString(end)
	b.WriteString(strings.Repeat(".", n-b.Len()))
	return b.String()
}

// streamedLong streams a long answer in pieces of 500 characters, 100 ms
// apart: a draft shows before the answer is whole.
func streamedLong(text string) fakellm.Step {
	return fakellm.Step{Text: text, ChunkSize: 500, ChunkDelay: 100 * time.Millisecond}
}

// checkParts fails unless the chat's messages are the answer's parts
// exactly: each once, in order, nothing else, and every step of the
// answer shown once, in order.
func checkParts(t *testing.T, got, parts []string, answer string) {
	t.Helper()
	if len(got) != len(parts) {
		t.Fatalf("the chat shows %d messages, want the %d parts of the reply", len(got), len(parts))
	}
	for i := range parts {
		if got[i] != parts[i] {
			t.Errorf("message %d is not part %d:\n%q\nwant\n%q", i+1, i+1, got[i], parts[i])
		}
	}
	// Discord's Markdown escapes punctuation a backslash shows as is.
	shown := strings.ReplaceAll(strings.Join(got, ""), `\`, "")
	last := strings.Count(answer, "**Step ")
	at := 0
	for i := 1; i <= last; i++ {
		step := fmt.Sprintf("Step %03d.", i)
		j := strings.Index(shown, step)
		if n := strings.Count(shown, step); n != 1 || j < at {
			t.Fatalf("%s is shown %d times, at %d (the step above it at %d)", step, n, j, at)
		}
		at = j
	}
	if end := answer[strings.LastIndex(answer, "That is all"):]; !strings.HasSuffix(shown, end) {
		t.Errorf("the reply does not end as the answer does: %q", shown[max(0, len(shown)-80):])
	}
}

// texts42 is the text of each message to chat 42, in order.
func texts42(ms []faketelegram.Message) []string {
	var out []string
	for _, m := range to42(ms) {
		out = append(out, m.Text)
	}
	return out
}

// slackTexts is the text of each message the bot posted in channel, in
// order.
func slackTexts(fs *fakeslack.Server, channel string) []string {
	var out []string
	for _, m := range fs.Sent() {
		if m.Channel == channel {
			out = append(out, m.Text)
		}
	}
	return out
}

// connectServe is a client of u's running serve.
func connectServe(t *testing.T, u *user) *engine.Runtime {
	t.Helper()
	cfg, err := config.Load(u.home, func(k string) string { return u.env[k] })
	if err != nil {
		t.Fatal(err)
	}
	info, err := engine.ReadServeInfo(u.home)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := engine.Connect(t.Context(), cfg, info, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt
}

// waitWorkflowDone waits until the workflow id completed, and fails if it
// failed.
func waitWorkflowDone(t *testing.T, u *user, id string, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := connectServe(t, u).Client.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
		t.Fatalf("the chat message's workflow %s: %v", id, err)
	}
}

// replyHeartbeats reports whether the running workflow id scheduled its
// reply (ChatReply) with a heartbeat timeout: without one, Temporal
// retries an attempt whose process was killed only when its start-to-close
// timeout ends.
func replyHeartbeats(t *testing.T, u *user, id string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	iter := connectServe(t, u).Client.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", id, err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == workflows.ChatReplyName {
			return a.GetHeartbeatTimeout().AsDuration() > 0
		}
	}
	t.Fatalf("%s has not scheduled its reply", id)
	return false
}

// TestTelegramLongReply: a streamed 10,000-character answer reaches the
// chat in full: its draft becomes part 1 of 3 and the other parts follow,
// in order, each once, also when Telegram refuses part 3 once (a flood's
// 429): the reply activity is retried and sends only that part.
func TestTelegramLongReply(t *testing.T) {
	t.Parallel()
	answer := longAnswer(10000)
	model := fakellm.New(streamedLong(answer))
	defer model.Close()
	u, tg, _ := telegramServe(t, model)
	parts := format.Split(answer, format.TelegramLimit, format.FlavourTelegramHTML)
	if len(parts) != 3 {
		t.Fatalf("the answer renders to %d parts on Telegram, want 3", len(parts))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	tg.HoldAfter("sendMessage", 2) // the draft, and part 2
	update := tg.Send(42, 0, "tell me everything")
	if _, err := tg.WaitHeld(ctx, func(n int) bool { return n == 1 }); err != nil {
		t.Fatalf("part 3 never came: %v; the chat shows %d messages", err, len(to42(tg.Sent())))
	}
	if got := texts42(tg.Sent()); len(got) != 2 || got[0] != parts[0] || got[1] != parts[1] {
		t.Fatalf("before part 3 the chat shows %d messages, want parts 1 and 2", len(got))
	}
	tg.FailNext("sendMessage", 1)
	tg.Release()
	waitTelegram(t, tg, time.Minute, "part 3", func(ms []faketelegram.Message) bool { return len(to42(ms)) >= 3 })
	waitWorkflowDone(t, u, "gateway/telegram/7000/"+strconv.FormatInt(update, 10), time.Minute)
	msgs := to42(tg.Sent())
	checkParts(t, texts42(msgs), parts, answer)
	if d := msgs[0]; d.Edits == 0 || d.ReplyTo == 0 {
		t.Errorf("part 1 is not the draft edited in place, threaded to the question: %+v", d)
	}
	for _, m := range msgs {
		if m.ParseMode != "HTML" {
			t.Errorf("message %d is sent as %q", m.ID, m.ParseMode)
		}
	}
}

// TestTelegramLongReplyKilled: serve SIGKILLed after part 2 of a
// 10,000-character reply is sent and before part 3 reaches Telegram (its
// request held, then dropped with the process): after the restart the
// reply activity is retried and sends part 3 alone; the chat has each
// part once, in order.
func TestTelegramLongReplyKilled(t *testing.T) {
	t.Parallel()
	answer := longAnswer(10000)
	model := fakellm.New(streamedLong(answer))
	defer model.Close()
	u, tg, s := telegramServe(t, model)
	parts := format.Split(answer, format.TelegramLimit, format.FlavourTelegramHTML)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	tg.HoldAfter("sendMessage", 2)
	update := tg.Send(42, 0, "tell me everything")
	id := "gateway/telegram/7000/" + strconv.FormatInt(update, 10)
	if _, err := tg.WaitHeld(ctx, func(n int) bool { return n == 1 }); err != nil {
		t.Fatalf("part 3 never came: %v", err)
	}
	if !replyHeartbeats(t, u, id) {
		tg.Release()
		t.Fatal("ChatReply is scheduled without a heartbeat timeout (workflows/chat_message.go): an attempt killed with its process would be retried only after its 10-minute start-to-close timeout")
	}
	s.kill()
	if _, err := tg.WaitHeld(ctx, func(n int) bool { return n == 0 }); err != nil {
		t.Fatal("the held part 3 outlived the process that sent it")
	}
	tg.Release()
	if got := texts42(tg.Sent()); len(got) != 2 || got[0] != parts[0] || got[1] != parts[1] {
		t.Fatalf("after the kill the chat shows %d messages, want parts 1 and 2", len(got))
	}
	u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")
	waitTelegram(t, tg, 2*time.Minute, "part 3 after the restart", func(ms []faketelegram.Message) bool { return len(to42(ms)) >= 3 })
	waitWorkflowDone(t, u, id, time.Minute)
	checkParts(t, texts42(tg.Sent()), parts, answer)
}

// TestSlackLongReply: the same 10,000-character answer in a Slack DM: the
// draft becomes part 1 of 4, the others follow in order, each once, also
// when Slack rate-limits part 4 once.
func TestSlackLongReply(t *testing.T) {
	t.Parallel()
	answer := longAnswer(10000)
	model := fakellm.New(streamedLong(answer))
	defer model.Close()
	u, fs, _ := slackServe(t, model)
	parts := format.Split(answer, format.SlackLimit, format.FlavourSlack)
	if len(parts) != 4 {
		t.Fatalf("the answer renders to %d parts on Slack, want 4", len(parts))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	fs.HoldAfter("chat.postMessage", 3) // the draft, parts 2 and 3
	ts := fs.SendDM("U42", "D42", "tell me everything")
	if _, err := fs.WaitHeld(ctx, func(n int) bool { return n == 1 }); err != nil {
		t.Fatalf("part 4 never came: %v; the DM shows %d messages", err, len(slackTexts(fs, "D42")))
	}
	if got := slackTexts(fs, "D42"); len(got) != 3 || got[2] != parts[2] {
		t.Fatalf("before part 4 the DM shows %d messages, want parts 1 to 3", len(got))
	}
	fs.FailNext("chat.postMessage", "ratelimited")
	fs.Release()
	waitSlackCount(t, fs, "D42", 4, time.Minute)
	waitWorkflowDone(t, u, "gateway/slack/"+fakeslack.TeamID+"."+fakeslack.BotUserID+"/"+fs.EventID(ts), time.Minute)
	checkParts(t, slackTexts(fs, "D42"), parts, answer)
	if d := fs.Sent()[0]; d.Edits == 0 {
		t.Errorf("part 1 is not the draft edited in place: %+v", d)
	}
	waitAcked(t, fs)
}

// TestSlackLongReplyKilled: serve SIGKILLed after part 3 of the reply is
// posted and before part 4 reaches Slack; after the restart part 4 alone
// is posted.
func TestSlackLongReplyKilled(t *testing.T) {
	t.Parallel()
	answer := longAnswer(10000)
	model := fakellm.New(streamedLong(answer))
	defer model.Close()
	u, fs, s := slackServe(t, model)
	parts := format.Split(answer, format.SlackLimit, format.FlavourSlack)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	fs.HoldAfter("chat.postMessage", 3)
	ts := fs.SendDM("U42", "D42", "tell me everything")
	if _, err := fs.WaitHeld(ctx, func(n int) bool { return n == 1 }); err != nil {
		t.Fatalf("part 4 never came: %v", err)
	}
	id := "gateway/slack/" + fakeslack.TeamID + "." + fakeslack.BotUserID + "/" + fs.EventID(ts)
	if !replyHeartbeats(t, u, id) {
		fs.Release()
		t.Fatal("ChatReply is scheduled without a heartbeat timeout (workflows/chat_message.go): an attempt killed with its process would be retried only after its 10-minute start-to-close timeout")
	}
	s.kill()
	if _, err := fs.WaitHeld(ctx, func(n int) bool { return n == 0 }); err != nil {
		t.Fatal("the held part 4 outlived the process that sent it")
	}
	fs.Release()
	if got := slackTexts(fs, "D42"); len(got) != 3 {
		t.Fatalf("after the kill the DM shows %d messages, want parts 1 to 3", len(got))
	}
	u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")
	waitSlackCount(t, fs, "D42", 4, 2*time.Minute)
	waitWorkflowDone(t, u, id, time.Minute)
	checkParts(t, slackTexts(fs, "D42"), parts, answer)
}

// waitSlackCount waits until the bot posted n messages in channel.
func waitSlackCount(t *testing.T, fs *fakeslack.Server, channel string, n int, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if _, err := fs.WaitSent(ctx, func([]fakeslack.Message) bool { return len(slackTexts(fs, channel)) >= n }); err != nil {
		t.Fatalf("%d messages in %s within %s, want %d", len(slackTexts(fs, channel)), channel, within, n)
	}
}
