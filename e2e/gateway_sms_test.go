package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketwilio"
	"github.com/talaria-agent/talaria/internal/gateway/format"
	"github.com/talaria-agent/talaria/internal/gateway/sms"
)

const (
	smsNumber  = "+15550000001"
	smsAllowed = "+15550000042"
)

// smsServe starts serve with its API on a free port, answering texts to
// the fake Twilio number from smsAllowed; the number's webhook is the
// API's /webhooks/sms.
func smsServe(t *testing.T, model *fakellm.Server) (*user, *faketwilio.Server, *server, int) {
	t.Helper()
	tw := faketwilio.Start(smsNumber)
	t.Cleanup(tw.Close)
	u := newUser(t, model.URL())
	u.env["TWILIO_ACCOUNT_SID"] = tw.AccountSID
	u.env["TWILIO_AUTH_TOKEN"] = tw.AuthToken
	u.env["TWILIO_FROM_NUMBER"] = smsNumber
	u.env["TWILIO_API_URL"] = tw.URL()
	u.env["SMS_ALLOWED_USERS"] = smsAllowed
	port := freePort(t)
	tw.SetWebhook(fmt.Sprintf("http://127.0.0.1:%d/webhooks/sms", port))
	s, _ := u.apiServeOn(port)
	return u, tw, s, port
}

// text texts the number from a phone until the webhook is taken (200),
// as Twilio's retries would, and returns the message's sid.
func text(t *testing.T, tw *faketwilio.Server, from, body string) string {
	t.Helper()
	sid, status, err := tw.Text(from, body)
	return untilTaken(t, tw, body, sid, status, err)
}

// untilTaken delivers the webhook of the message sid again, as Twilio's
// retries would, until it is taken (200), and returns sid.
func untilTaken(t *testing.T, tw *faketwilio.Server, body, sid string, status int, err error) string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); (err != nil || status != http.StatusOK) && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		status, err = tw.Resend(sid)
	}
	if err != nil || status != http.StatusOK {
		t.Fatalf("the webhook of %q: %d %v", body, status, err)
	}
	return sid
}

// waitSMS waits until the number sent to phone a text containing sub.
func waitSMS(t *testing.T, tw *faketwilio.Server, phone, sub string, within time.Duration) faketwilio.Message {
	t.Helper()
	return waitOne(t, fmt.Sprintf("text with %q to %s", sub, phone), tw.Sent,
		func(m faketwilio.Message) bool { return m.To == phone && strings.Contains(m.Body, sub) }, within)
}

func textsTo(tw *faketwilio.Server, phone string) []string {
	return textsOf(tw.Sent(), func(m faketwilio.Message) bool { return m.To == phone }, func(m faketwilio.Message) string { return m.Body })
}

// TestSMSConversation: a text from an allowed number gets one reply (no
// draft: an SMS cannot be edited); the same webhook delivered again makes
// no second turn; a stranger gets one refusal and causes no model call; a
// forged webhook is refused with 403 and logged without its body; an
// approval and a question are answered by text; a cron job delivers to
// the number.
func TestSMSConversation(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		slowStep("Here is the **plan**: rest."),
		fakellm.ToolStep(fakellm.ToolCall{ID: "rm1", Name: "terminal", Arguments: `{"command":"rm -rf ./first"}`}),
		fakellm.TextStep("Removed first."),
		fakellm.ToolStep(fakellm.ToolCall{ID: "q1", Name: "clarify", Arguments: `{"question":"Which colour should the button be?","choices":["red","blue"]}`}),
		fakellm.TextStep("Blue it is."),
		fakellm.TextStep("Overnight: all quiet."),
	)
	defer model.Close()
	u, tw, s, _ := smsServe(t, model)
	if out := serveOutput(s); !strings.Contains(out, "sms @"+smsNumber) || strings.Contains(out, tw.AuthToken) {
		t.Fatalf("ready line:\n%s", out)
	}

	text(t, tw, "+15550000099", "let me in")
	text(t, tw, "+15550000099", "please")
	sid := text(t, tw, smsAllowed, "what is the plan?")
	waitSMS(t, tw, smsAllowed, "Here is the plan: rest.", time.Minute)
	if status, err := tw.Resend(sid); err != nil || status != http.StatusOK {
		t.Fatalf("the webhook again: %d %v", status, err)
	}
	if status, err := tw.Forge(smsAllowed, "forged secret body"); err != nil || status != http.StatusForbidden {
		t.Errorf("a forged webhook: %d %v, want 403", status, err)
	}
	time.Sleep(time.Second) // room for a second reply or refusal
	if got := textsTo(tw, smsAllowed); len(got) != 1 {
		t.Fatalf("the allowed number got %q, want one reply", got)
	}
	if got := textsTo(tw, "+15550000099"); len(got) != 1 {
		t.Errorf("the stranger got %q, want one refusal", got)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("model requests: %d, want 1", n)
	}
	log := serveOutput(s) + readLogIfAny(u, "serve")
	if !strings.Contains(log, "forged webhook") || strings.Contains(log, "forged secret body") {
		t.Errorf("the forged webhook is not logged, or logged with its body:\n%s", log)
	}

	work := config.Default(u.home).WorkspaceDir()
	if err := os.MkdirAll(filepath.Join(work, "first"), 0o755); err != nil {
		t.Fatal(err)
	}
	text(t, tw, smsAllowed, "remove first")
	ask := waitSMS(t, tw, smsAllowed, "rm -rf ./first", 30*time.Second)
	code := regexp.MustCompile(`ap:once:[0-9a-f]{32}`).FindString(ask.Body)
	if code == "" || !strings.Contains(ask.Body, "ap:deny:") {
		t.Fatalf("the approval does not give its code lines: %q", ask.Body)
	}
	text(t, tw, smsAllowed, "/approve")
	waitSMS(t, tw, smsAllowed, "only by answering with one of the code lines", 30*time.Second)
	if _, err := os.Stat(filepath.Join(work, "first")); err != nil {
		t.Fatalf("/approve by SMS ran the command: %v", err)
	}
	text(t, tw, smsAllowed, code)
	waitSMS(t, tw, smsAllowed, "Removed first.", 30*time.Second)
	if _, err := os.Stat(filepath.Join(work, "first")); !os.IsNotExist(err) {
		t.Fatalf("the approved command did not run: %v", err)
	}

	text(t, tw, smsAllowed, "pick a colour")
	q := waitSMS(t, tw, smsAllowed, "Which colour", 30*time.Second)
	if !strings.Contains(q.Body, "red, blue") {
		t.Errorf("the question does not list its choices: %q", q.Body)
	}
	text(t, tw, smsAllowed, "blue")
	waitSMS(t, tw, smsAllowed, "Blue it is.", 30*time.Second)
	reqs := model.Requests()
	if last, _ := reqs[len(reqs)-1].LastMessage(); !strings.Contains(last.Content, "blue") {
		t.Errorf("the model read %q as the answer", last.Content)
	}

	cronDelivering(t, u, "alerts", "sms:"+smsAllowed, "sms:5550000042", "sms:<phone number>")
	m := waitSMS(t, tw, smsAllowed, "all quiet", time.Minute)
	if !strings.Contains(m.Body, "alerts") {
		t.Errorf("the delivery does not name the job: %q", m.Body)
	}
	waitRunDelivered(t, u, "alerts", "sms:"+smsAllowed)
}

// TestSMSLongReplyKilled: serve SIGKILLed after part 1 of a long reply is
// texted and before part 2 reaches Twilio (its request held, then dropped
// with the process): after the restart each part is texted once, in
// order.
func TestSMSLongReplyKilled(t *testing.T) {
	t.Parallel()
	answer := longAnswer(5000)
	model := fakellm.New(streamedLong(answer))
	defer model.Close()
	u, tw, s, port := smsServe(t, model)
	parts := format.Split(answer, sms.Limit, format.FlavourPlain)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	tw.After("createMessage", 1)
	sid := text(t, tw, smsAllowed, "tell me everything")
	id := "gateway/sms/" + smsNumber + "/" + sid
	if _, err := tw.WaitHeld(ctx, func(n int) bool { return n == 1 }); err != nil {
		t.Fatalf("part 2 never came: %v", err)
	}
	if !replyHeartbeats(t, u, id) {
		tw.Release()
		t.Fatal("ChatReply is scheduled without a heartbeat timeout")
	}
	s.kill()
	if _, err := tw.WaitHeld(ctx, func(n int) bool { return n == 0 }); err != nil {
		t.Fatal("the held part 2 outlived the process that sent it")
	}
	tw.Release()
	if got := textsTo(tw, smsAllowed); len(got) != 1 {
		t.Fatalf("after the kill the phone has %d texts, want part 1", len(got))
	}
	u.apiServeOn(port)
	if _, err := tw.WaitSent(ctx, func([]faketwilio.Message) bool { return len(textsTo(tw, smsAllowed)) >= len(parts) }); err != nil {
		t.Fatalf("the reply never finished: %d of %d parts", len(textsTo(tw, smsAllowed)), len(parts))
	}
	waitWorkflowDone(t, u, id, time.Minute)
	checkParts(t, textsTo(tw, smsAllowed), parts, answer)
}
