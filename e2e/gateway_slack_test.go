package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/fakeslack"
)

const (
	slackBotToken = "xoxb-1-secret-bot-token"
	slackAppToken = "xapp-1-secret-app-token"
)

// slackServe starts serve answering the fake Slack app for user U42.
func slackServe(t *testing.T, model *fakellm.Server, env ...string) (*user, *fakeslack.Server, *server) {
	t.Helper()
	fs := fakeslack.Start(slackBotToken, slackAppToken, "talaria")
	t.Cleanup(fs.Close)
	u := newUser(t, model.URL())
	for i := 0; i+1 < len(env); i += 2 {
		u.env[env[i]] = env[i+1]
	}
	u.env["SLACK_BOT_TOKEN"] = fs.BotToken
	u.env["SLACK_APP_TOKEN"] = fs.AppToken
	u.env["SLACK_API_URL"] = fs.URL()
	u.env["SLACK_ALLOWED_USERS"] = "U42"
	s := u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")
	return u, fs, s
}

// waitSlack waits until a message in channel contains text, and returns it.
func waitSlack(t *testing.T, fs *fakeslack.Server, channel, text string, within time.Duration) fakeslack.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var found fakeslack.Message
	sent, err := fs.WaitSent(ctx, func(ms []fakeslack.Message) bool {
		for _, m := range ms {
			if m.Channel == channel && strings.Contains(m.Text, text) {
				found = m
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no message with %q in %s within %s; sent:\n%+v", text, channel, within, sent)
	}
	return found
}

func slackCount(msgs []fakeslack.Message, f func(fakeslack.Message) bool) int {
	n := 0
	for _, m := range msgs {
		if f(m) {
			n++
		}
	}
	return n
}

// waitAcked waits until every envelope the fake sent is acknowledged.
func waitAcked(t *testing.T, fs *fakeslack.Server) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for fs.Pending() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := fs.Pending(); n != 0 {
		t.Errorf("%d Slack events not acknowledged", n)
	}
	if bad := fs.BadAcks(); len(bad) > 0 {
		t.Errorf("acknowledgements of envelopes Slack never sent: %v", bad)
	}
}

// TestSlackDM: serve with a Slack app answers an allowed user's DM in the
// DM, and a mention in a channel in the mention's thread; a stranger gets
// one refusal and causes no model call; every envelope is acknowledged.
func TestSlackDM(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		if strings.Contains(last.Content, "in the channel") {
			return fakellm.TextStep("Answered in the thread.")
		}
		return fakellm.TextStep("Hello from **Talaria** <3")
	}))
	defer model.Close()
	_, fs, s := slackServe(t, model)
	if out := serveOutput(s); !strings.Contains(out, "slack @talaria") || strings.Contains(out, "secret") {
		t.Fatalf("ready line:\n%s", out)
	}

	fs.SendDM("U99", "D99", "let me in")
	fs.SendDM("U99", "D99", "please")
	fs.SendDM("U42", "D42", "hi there")
	reply := waitSlack(t, fs, "D42", "Talaria", time.Minute)
	if !strings.Contains(reply.Text, "*Talaria*") || !strings.Contains(reply.Text, "&lt;3") || reply.ThreadTS != "" {
		t.Fatalf("reply %+v", reply)
	}
	mention := fs.Mention("U42", "C1", "a question in the channel", "")
	inThread := waitSlack(t, fs, "C1", "Answered in the thread.", time.Minute)
	if inThread.ThreadTS != mention {
		t.Errorf("the channel's answer is not in the mention's thread: %+v (mention %s)", inThread, mention)
	}
	time.Sleep(time.Second) // room for a second refusal to show
	if n := slackCount(fs.Sent(), func(m fakeslack.Message) bool { return m.Channel == "D99" }); n != 1 {
		t.Errorf("the stranger got %d messages, want one refusal: %+v", n, fs.Sent())
	}
	for _, r := range model.Requests() {
		if strings.Contains(string(r.Raw), "let me in") || strings.Contains(string(r.Raw), "please") {
			t.Errorf("the stranger's message reached the model")
		}
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("model requests: %d, want 2", n)
	}
	waitAcked(t, fs)
}

// TestSlackControls: an approval shows Block Kit buttons and a press on
// Approve runs the command (the buttons give way to the decision);
// /approve, sent after a space as Slack wants for text starting with a
// slash, does the same.
func TestSlackControls(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "rm1", Name: "terminal", Arguments: `{"command":"rm -rf ./first"}`}),
		fakellm.TextStep("Removed first."),
		fakellm.ToolStep(fakellm.ToolCall{ID: "rm2", Name: "terminal", Arguments: `{"command":"rm -rf ./second"}`}),
		fakellm.TextStep("Removed second."),
	)
	defer model.Close()
	u, fs, _ := slackServe(t, model)
	work := config.Default(u.home).WorkspaceDir()
	for _, d := range []string{"first", "second"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	fs.SendDM("U42", "D42", "remove first")
	ask := waitSlack(t, fs, "D42", "rm -rf ./first", 30*time.Second)
	if len(ask.Buttons) == 0 || ask.Buttons[0][0].Text != "Approve once" {
		t.Fatalf("the approval has no buttons: %+v", ask)
	}
	if _, err := os.Stat(filepath.Join(work, "first")); err != nil {
		t.Fatalf("the command ran before it was approved: %v", err)
	}
	fs.Press("U42", ask, ask.Buttons[0][0].Value)
	waitSlack(t, fs, "D42", "Removed first.", 30*time.Second)
	if _, err := os.Stat(filepath.Join(work, "first")); !os.IsNotExist(err) {
		t.Fatalf("the approved command did not run: %v", err)
	}
	decided := waitSlack(t, fs, "D42", "Approved once.", 10*time.Second)
	if len(decided.Buttons) != 0 || decided.TS != ask.TS {
		t.Errorf("the pressed approval still has its buttons: %+v", decided)
	}

	fs.SendDM("U42", "D42", "remove second")
	waitSlack(t, fs, "D42", "rm -rf ./second", 30*time.Second)
	fs.SendDM("U42", "D42", " /approve")
	waitSlack(t, fs, "D42", "Approved: rm -rf ./second", 30*time.Second)
	waitSlack(t, fs, "D42", "Removed second.", 30*time.Second)
	if n := slackCount(fs.Sent(), func(m fakeslack.Message) bool { return strings.Contains(m.Text, "Removed first.") }); n != 1 {
		t.Errorf("the first reply was sent %d times", n)
	}
	waitAcked(t, fs)
}

// TestSlackExactlyOnce: serve SIGKILLed while a DM's turn runs: after the
// restart the message is answered once, and every envelope (those Slack
// delivered again while serve was down too) is acknowledged.
func TestSlackExactlyOnce(t *testing.T) {
	t.Parallel()
	slow := fakellm.TextStep("First answer, after a while.")
	slow.Delay = 3 * time.Second
	model := fakellm.New(slow, fakellm.TextStep("First answer, after a while."), fakellm.TextStep("Second answer."))
	defer model.Close()
	u, fs, s := slackServe(t, model)

	fs.SendDM("U42", "D42", "first question")
	if err := model.WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	// The model call in flight dies with serve; the turn goes on after.
	// A message sent while serve is down waits for its connection.
	s.kill()
	fs.SendDM("U42", "D42", "second question")
	s = u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")
	waitSlack(t, fs, "D42", "First answer", time.Minute)
	waitSlack(t, fs, "D42", "Second answer.", time.Minute)
	time.Sleep(2 * time.Second) // room for a duplicate to show
	for _, text := range []string{"First answer", "Second answer."} {
		if n := slackCount(fs.Sent(), func(m fakeslack.Message) bool { return strings.Contains(m.Text, text) }); n != 1 {
			t.Errorf("%q was sent %d times: %+v", text, n, fs.Sent())
		}
	}
	waitAcked(t, fs)
	_ = s
}

// TestSlackCronDelivery: a cron job delivering to slack:<channel> posts
// its result there once per run, under the job's name.
func TestSlackCronDelivery(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(fakellm.Request) fakellm.Step {
		return fakellm.TextStep("Overnight: all **quiet**.")
	}))
	defer model.Close()
	u, fs, _ := slackServe(t, model)
	cronDelivering(t, u, "alerts", "slack:C0ALERTS", "slack:#alerts", "slack:<channel id>")
	m := waitSlack(t, fs, "C0ALERTS", "all *quiet*", time.Minute)
	if !strings.Contains(m.Text, "alerts") {
		t.Errorf("the delivery does not name the job: %q", m.Text)
	}
	waitRunDelivered(t, u, "alerts", "slack:C0ALERTS")
	time.Sleep(time.Second)
	if n := slackCount(fs.Sent(), func(m fakeslack.Message) bool { return strings.Contains(m.Text, "all *quiet*") }); n != 1 {
		t.Errorf("delivered %d times", n)
	}
}
