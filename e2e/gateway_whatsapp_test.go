package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/fakewhatsapp"
	"github.com/talaria-agent/talaria/internal/gateway/format"
)

const waAllowed = "15550000042"

// whatsappServe starts serve with its API on a free port, answering the
// fake business number for waAllowed; the app's webhook is the API's
// /webhooks/whatsapp.
func whatsappServe(t *testing.T, model *fakellm.Server) (*user, *fakewhatsapp.Server, *server, int) {
	t.Helper()
	wa := fakewhatsapp.Start()
	t.Cleanup(wa.Close)
	u := newUser(t, model.URL())
	u.env["WHATSAPP_ACCESS_TOKEN"] = wa.AccessToken
	u.env["WHATSAPP_APP_SECRET"] = wa.AppSecret
	u.env["WHATSAPP_VERIFY_TOKEN"] = wa.VerifyToken
	u.env["WHATSAPP_PHONE_NUMBER_ID"] = wa.PhoneNumberID
	u.env["WHATSAPP_API_URL"] = wa.URL()
	u.env["WHATSAPP_ALLOWED_USERS"] = waAllowed
	port := freePort(t)
	wa.SetWebhook(fmt.Sprintf("http://127.0.0.1:%d/webhooks/whatsapp", port))
	s, _ := u.apiServeOn(port)
	return u, wa, s, port
}

// waTaken retries a notification until the webhook takes it (200), as
// Meta's retries would.
func waTaken(t *testing.T, wa *fakewhatsapp.Server, id string, status int, err error) string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); (err != nil || status != http.StatusOK) && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		status, err = wa.Resend(id)
	}
	if err != nil || status != http.StatusOK {
		t.Fatalf("the webhook of %s: %d %v", id, status, err)
	}
	return id
}

func waSend(t *testing.T, wa *fakewhatsapp.Server, from, text string) string {
	t.Helper()
	id, status, err := wa.Send(from, text)
	return waTaken(t, wa, id, status, err)
}

// waWait waits until the number sent to waID a message containing sub.
func waWait(t *testing.T, wa *fakewhatsapp.Server, waID, sub string, within time.Duration) fakewhatsapp.Message {
	t.Helper()
	return waitOne(t, fmt.Sprintf("message with %q to %s", sub, waID), wa.Sent,
		func(m fakewhatsapp.Message) bool { return m.To == waID && strings.Contains(m.Body, sub) }, within)
}

func waTo(wa *fakewhatsapp.Server, waID string) []string {
	return textsOf(wa.Sent(), func(m fakewhatsapp.Message) bool { return m.To == waID }, func(m fakewhatsapp.Message) string { return m.Body })
}

// TestWhatsAppConversation: the subscription's handshake answers only the
// configured verify token; a message from an allowed person gets one
// reply; the same notification again makes no second turn; a stranger
// gets one refusal and causes no model call; a forged notification is
// refused with 403 and logged without its body; an approval is a list
// and a question reply buttons, each answered by a press; a cron job
// delivers to the person, and outside the 24-hour window the run says
// why it could not.
func TestWhatsAppConversation(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		slowStep("Here is the **plan**: rest."),
		fakellm.ToolStep(fakellm.ToolCall{ID: "rm1", Name: "terminal", Arguments: `{"command":"rm -rf ./first"}`}),
		fakellm.TextStep("Removed first."),
		fakellm.ToolStep(fakellm.ToolCall{ID: "q1", Name: "clarify", Arguments: `{"question":"Which colour should the button be?","choices":["red","blue"]}`}),
		fakellm.TextStep("Blue it is."),
		fakellm.TextStep("Overnight: all quiet."),
		fakellm.TextStep("Overnight: all quiet again."),
	)
	defer model.Close()
	u, wa, s, _ := whatsappServe(t, model)
	if out := serveOutput(s); !strings.Contains(out, "whatsapp @") || strings.Contains(out, wa.AccessToken) {
		t.Fatalf("ready line:\n%s", out)
	}
	if status, _, err := wa.Verify("not-the-token"); err != nil || status != http.StatusForbidden {
		t.Errorf("a handshake with a wrong verify token: %d %v", status, err)
	}
	if status, body, err := wa.Verify(wa.VerifyToken); err != nil || status != http.StatusOK || body != "1158201444" {
		t.Errorf("the handshake: %d %q %v, want the challenge", status, body, err)
	}

	waSend(t, wa, "15550000099", "let me in")
	waSend(t, wa, "15550000099", "please")
	id := waSend(t, wa, waAllowed, "what is the plan?")
	reply := waWait(t, wa, waAllowed, "Here is the *plan*: rest.", time.Minute)
	if reply.ReplyTo != id {
		t.Errorf("the reply does not answer the message: %+v", reply)
	}
	if status, err := wa.Resend(id); err != nil || status != http.StatusOK {
		t.Fatalf("the notification again: %d %v", status, err)
	}
	if status, err := wa.Forge(waAllowed, "forged secret body"); err != nil || status != http.StatusForbidden {
		t.Errorf("a forged notification: %d %v, want 403", status, err)
	}
	if status, err := wa.Replay(waAllowed, "replayed secret body", 8*24*time.Hour); err != nil || status != http.StatusForbidden {
		t.Errorf("a notification replayed 8 days later: %d %v, want 403", status, err)
	}
	time.Sleep(time.Second) // room for a second reply or refusal
	if got := waTo(wa, waAllowed); len(got) != 1 {
		t.Fatalf("the allowed person got %q, want one reply", got)
	}
	if got := waTo(wa, "15550000099"); len(got) != 1 {
		t.Errorf("the stranger got %q, want one refusal", got)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("model requests: %d, want 1", n)
	}
	log := serveOutput(s) + readLogIfAny(u, "serve")
	if !strings.Contains(log, "forged webhook") || !strings.Contains(log, "a replay") ||
		strings.Contains(log, "forged secret body") || strings.Contains(log, "replayed secret body") {
		t.Errorf("the forged notification is not logged, or logged with its body:\n%s", log)
	}

	work := config.Default(u.home).WorkspaceDir()
	if err := os.MkdirAll(filepath.Join(work, "first"), 0o755); err != nil {
		t.Fatal(err)
	}
	waSend(t, wa, waAllowed, "remove first")
	ask := waWait(t, wa, waAllowed, "rm -rf ./first", 30*time.Second)
	if ask.Type != "interactive" || len(ask.Buttons) != 4 || ask.Buttons[0].Title != "Approve once" {
		t.Fatalf("the approval is not a list of its four choices: %+v", ask)
	}
	pid, status, err := wa.Press(waAllowed, ask, ask.Buttons[0].ID)
	waTaken(t, wa, pid, status, err)
	waWait(t, wa, waAllowed, "Removed first.", 30*time.Second)
	if _, err := os.Stat(filepath.Join(work, "first")); !os.IsNotExist(err) {
		t.Fatalf("the approved command did not run: %v", err)
	}

	waSend(t, wa, waAllowed, "pick a colour")
	q := waWait(t, wa, waAllowed, "Which colour", 30*time.Second)
	if len(q.Buttons) != 2 || q.Buttons[1].Title != "blue" {
		t.Fatalf("the question's choices are not reply buttons: %+v", q)
	}
	pid, status, err = wa.Press(waAllowed, q, q.Buttons[1].ID)
	waTaken(t, wa, pid, status, err)
	waWait(t, wa, waAllowed, "Blue it is.", 30*time.Second)

	cronDelivering(t, u, "alerts", "whatsapp:"+waAllowed, "whatsapp:+15550000042", "whatsapp:<WhatsApp id>")
	m := waWait(t, wa, waAllowed, "all quiet", time.Minute)
	if !strings.Contains(m.Body, "alerts") {
		t.Errorf("the delivery does not name the job: %q", m.Body)
	}
	waitRunDelivered(t, u, "alerts", "whatsapp:"+waAllowed)
	wa.Age(waAllowed, 25*time.Hour)
	if out, stderr, code := u.run(time.Minute, "cron", "run-now", "alerts"); code != 0 {
		t.Fatalf("run-now: %d %s%s", code, out, stderr)
	}
	var runs string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if runs, _, _ = u.run(time.Minute, "cron", "runs", "alerts"); strings.Contains(runs, "24 hours") {
			break
		}
	}
	if !strings.Contains(runs, "24 hours") {
		t.Errorf("the run outside the window does not say why it was not delivered:\n%s", runs)
	}
}

// TestWhatsAppLongReplyKilled: serve SIGKILLed after part 1 of a long
// reply is sent and before part 2 reaches the Graph API: after the
// restart each part is sent once, in order.
func TestWhatsAppLongReplyKilled(t *testing.T) {
	t.Parallel()
	answer := longAnswer(10000)
	model := fakellm.New(streamedLong(answer))
	defer model.Close()
	u, wa, s, port := whatsappServe(t, model)
	parts := format.Split(answer, format.WhatsAppLimit, format.FlavourWhatsApp)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	wa.After("sendMessage", 1)
	mid := waSend(t, wa, waAllowed, "tell me everything")
	id := "gateway/whatsapp/" + wa.PhoneNumberID + "/" + mid
	if _, err := wa.WaitHeld(ctx, func(n int) bool { return n == 1 }); err != nil {
		t.Fatalf("part 2 never came: %v", err)
	}
	if !replyHeartbeats(t, u, id) {
		wa.Release()
		t.Fatal("ChatReply is scheduled without a heartbeat timeout")
	}
	s.kill()
	if _, err := wa.WaitHeld(ctx, func(n int) bool { return n == 0 }); err != nil {
		t.Fatal("the held part 2 outlived the process that sent it")
	}
	wa.Release()
	if got := waTo(wa, waAllowed); len(got) != 1 {
		t.Fatalf("after the kill the person has %d messages, want part 1", len(got))
	}
	u.apiServeOn(port)
	if _, err := wa.WaitSent(ctx, func([]fakewhatsapp.Message) bool { return len(waTo(wa, waAllowed)) >= len(parts) }); err != nil {
		t.Fatalf("the reply never finished: %d of %d parts", len(waTo(wa, waAllowed)), len(parts))
	}
	waitWorkflowDone(t, u, id, time.Minute)
	checkParts(t, waTo(wa, waAllowed), parts, answer)
}
