package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakediscord"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/gateway/format"
)

const discordToken = "MTAwMDAw.secret-discord-bot-token"

// discordServe starts serve answering the fake Discord bot for user 42,
// and waits until the bot is connected to the Gateway (Discord delivers
// nothing said before that).
func discordServe(t *testing.T, model *fakellm.Server, env ...string) (*user, *fakediscord.Server, *server) {
	t.Helper()
	fd := fakediscord.Start(discordToken, "talaria")
	t.Cleanup(fd.Close)
	u := newUser(t, model.URL())
	for i := 0; i+1 < len(env); i += 2 {
		u.env[env[i]] = env[i+1]
	}
	u.env["DISCORD_BOT_TOKEN"] = discordToken
	u.env["DISCORD_API_URL"] = fd.URL()
	u.env["DISCORD_ALLOWED_USERS"] = "42"
	s := u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")
	waitDiscordConnected(t, fd)
	return u, fd, s
}

func waitDiscordConnected(t *testing.T, fd *fakediscord.Server) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !fd.Connected(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the bot never connected to the Gateway")
		}
	}
}

// waitDiscord waits until a message the bot sent in channel contains
// text, and returns it.
func waitDiscord(t *testing.T, fd *fakediscord.Server, channel, text string, within time.Duration) fakediscord.Message {
	t.Helper()
	return waitOne(t, fmt.Sprintf("message with %q in %s", text, channel), fd.Sent,
		func(m fakediscord.Message) bool { return m.ChannelID == channel && strings.Contains(m.Content, text) }, within)
}

// discordIn is the content of each message the bot sent in channel.
func discordIn(fd *fakediscord.Server, channel string) []string {
	return textsOf(fd.Sent(), func(m fakediscord.Message) bool { return m.ChannelID == channel },
		func(m fakediscord.Message) string { return m.Content })
}

// TestDiscordDM: serve with a Discord bot answers an allowed user's DM
// with a streamed reply (a draft edited in place), and a mention in a
// channel in a thread started from it; an event delivered twice makes one
// turn; a stranger gets one refusal and causes no model call; no message
// pings anyone.
func TestDiscordDM(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		if strings.Contains(last.Content, "in the channel") {
			return fakellm.TextStep("Answered in the thread, @everyone.")
		}
		return slowStep(streamedMarkdown)
	}))
	defer model.Close()
	_, fd, s := discordServe(t, model)
	if out := serveOutput(s); !strings.Contains(out, "discord @talaria") || strings.Contains(out, "secret") {
		t.Fatalf("ready line:\n%s", out)
	}
	want := format.Render(streamedMarkdown, format.FlavourDiscord)

	fd.SendDM("99", "let me in")
	fd.SendDM("99", "please")
	dm := fd.SendDM("42", "what is the plan?")
	fd.Redeliver(dm.ID)
	reply := waitDiscord(t, fd, dm.ChannelID, "example.com/docs)\\.", time.Minute)
	if reply.ReplyTo != dm.ID || reply.Content != want {
		t.Errorf("the reply does not answer the message: %+v", reply)
	}
	ch := fd.TextChannel()
	mention := fd.Mention("42", ch, "a question in the channel")
	inThread := waitDiscord(t, fd, mention.ID, "Answered in the thread", time.Minute)
	fd.Redeliver(dm.ID)
	time.Sleep(1500 * time.Millisecond) // room for a stray edit, a second reply or a second refusal
	if got := discordIn(fd, dm.ChannelID); len(got) != 1 || got[0] != want {
		t.Errorf("the DM shows %q, want the one reply %q", got, want)
	}
	if reply.Edits < 1 {
		t.Errorf("the reply was not streamed (no edits): %+v", reply)
	}
	if !strings.Contains(inThread.Content, `@everyone`) {
		t.Errorf("thread reply %q", inThread.Content)
	}
	for _, m := range fd.Sent() {
		if m.AllowedMentions != `{"parse":[],"replied_user":false}` {
			t.Errorf("message %q may ping: allowed_mentions %s", m.Content, m.AllowedMentions)
		}
	}
	if n := len(discordIn(fd, fd.DMChannel("99"))); n != 1 {
		t.Errorf("the stranger got %d messages, want one refusal", n)
	}
	for _, r := range model.Requests() {
		if strings.Contains(string(r.Raw), "let me in") || strings.Contains(string(r.Raw), "please") {
			t.Errorf("the stranger's message reached the model")
		}
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("model requests: %d, want 2 (one turn for the DM delivered three times, one for the mention)", n)
	}
}

// TestDiscordControls: an approval shows buttons, and a press on Approve
// once runs the command (the buttons give way to the decision); a
// clarify question's choices are buttons, and the one pressed is the
// answer the model reads; a stranger's press changes nothing.
func TestDiscordControls(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "rm1", Name: "terminal", Arguments: `{"command":"rm -rf ./first"}`}),
		fakellm.TextStep("Removed first"),
		fakellm.ToolStep(fakellm.ToolCall{ID: "q1", Name: "clarify", Arguments: `{"question":"Which colour should the button be?","choices":["red","blue"]}`}),
		fakellm.TextStep("Blue it is"),
	)
	defer model.Close()
	u, fd, _ := discordServe(t, model)
	work := config.Default(u.home).WorkspaceDir()
	if err := os.MkdirAll(filepath.Join(work, "first"), 0o755); err != nil {
		t.Fatal(err)
	}
	dm := fd.DMChannel("42")

	fd.SendDM("42", "remove first")
	ask := waitDiscord(t, fd, dm, "rm -rf ./first", 30*time.Second)
	if len(ask.Buttons) == 0 || ask.Buttons[0][0].Label != "Approve once" {
		t.Fatalf("the approval has no buttons: %+v", ask)
	}
	fd.Press("99", ask, ask.Buttons[0][0].CustomID)
	time.Sleep(time.Second)
	if _, err := os.Stat(filepath.Join(work, "first")); err != nil {
		t.Fatalf("the command ran before it was approved (a stranger pressed): %v", err)
	}
	fd.Press("42", ask, ask.Buttons[0][0].CustomID)
	waitDiscord(t, fd, dm, "Removed first", 30*time.Second)
	if _, err := os.Stat(filepath.Join(work, "first")); !os.IsNotExist(err) {
		t.Fatalf("the approved command did not run: %v", err)
	}
	decided := waitDiscord(t, fd, dm, "Approved once", 10*time.Second)
	if len(decided.Buttons) != 0 || decided.ID != ask.ID {
		t.Errorf("the pressed approval still has its buttons: %+v", decided)
	}
	for i, a := range fd.Answered(ask.ID) {
		if !a {
			t.Errorf("press %d was never answered", i+1)
		}
	}

	fd.SendDM("42", "pick a colour")
	q := waitDiscord(t, fd, dm, "Which colour", 30*time.Second)
	if len(q.Buttons) != 2 || q.Buttons[1][0].Label != "blue" {
		t.Fatalf("the question's choices are not buttons: %+v", q)
	}
	fd.Press("42", q, q.Buttons[1][0].CustomID)
	waitDiscord(t, fd, dm, "Blue it is", 30*time.Second)
	reqs := model.Requests()
	if last, _ := reqs[len(reqs)-1].LastMessage(); !strings.Contains(last.Content, "blue") {
		t.Errorf("the model read %q as the answer", last.Content)
	}
}

// TestDiscordLongReplyKilled: serve SIGKILLed after part 2 of a
// 10,000-character reply is sent and before part 3 reaches Discord (its
// request held, then dropped with the process): after the restart the
// DM has each part once, in order.
func TestDiscordLongReplyKilled(t *testing.T) {
	t.Parallel()
	answer := longAnswer(10000)
	model := fakellm.New(streamedLong(answer))
	defer model.Close()
	u, fd, s := discordServe(t, model)
	parts := format.Split(answer, format.DiscordLimit, format.FlavourDiscord)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	fd.HoldAfter("createMessage", 2) // the draft, and part 2
	m := fd.SendDM("42", "tell me everything")
	id := "gateway/discord/" + fakediscord.BotID + "/" + m.ID
	if _, err := fd.WaitHeld(ctx, func(n int) bool { return n == 1 }); err != nil {
		t.Fatalf("part 3 never came: %v", err)
	}
	if !replyHeartbeats(t, u, id) {
		fd.Release()
		t.Fatal("ChatReply is scheduled without a heartbeat timeout")
	}
	s.kill()
	if _, err := fd.WaitHeld(ctx, func(n int) bool { return n == 0 }); err != nil {
		t.Fatal("the held part 3 outlived the process that sent it")
	}
	fd.Release()
	if got := discordIn(fd, m.ChannelID); len(got) != 2 {
		t.Fatalf("after the kill the DM shows %d messages, want parts 1 and 2", len(got))
	}
	u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")
	if _, err := fd.WaitSent(ctx, func(ms []fakediscord.Message) bool { return len(discordIn(fd, m.ChannelID)) >= len(parts) }); err != nil {
		t.Fatalf("the reply never finished: %d of %d parts", len(discordIn(fd, m.ChannelID)), len(parts))
	}
	waitWorkflowDone(t, u, id, time.Minute)
	checkParts(t, discordIn(fd, m.ChannelID), parts, answer)
}

// TestDiscordCronDelivery: a cron job delivering to discord:<channel>
// posts its result there once per run, under the job's name.
func TestDiscordCronDelivery(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(fakellm.Request) fakellm.Step {
		return fakellm.TextStep("Overnight: all **quiet**.")
	}))
	defer model.Close()
	u, fd, _ := discordServe(t, model)
	ch := fd.TextChannel()
	cronDelivering(t, u, "alerts", "discord:"+ch, "discord:#alerts", "discord:<channel id>")
	m := waitDiscord(t, fd, ch, "all **quiet**", time.Minute)
	if !strings.Contains(m.Content, "alerts") {
		t.Errorf("the delivery does not name the job: %q", m.Content)
	}
	waitRunDelivered(t, u, "alerts", "discord:"+ch)
	time.Sleep(time.Second)
	if n := len(discordIn(fd, ch)); n != 1 {
		t.Errorf("delivered %d times", n)
	}
}
