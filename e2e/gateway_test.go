package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketelegram"
)

// TestTelegramDM: serve with a Telegram bot answers an allowed user's DM
// in the same chat, threaded to the message; a stranger gets one refusal
// and causes no model call; every update is acknowledged.
func TestTelegramDM(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("Hello from **Talaria** <3"))
	defer model.Close()
	tg := faketelegram.Start("123:secret-token", "talaria_test_bot")
	defer tg.Close()
	u := newUser(t, model.URL())
	u.env["TELEGRAM_BOT_TOKEN"] = tg.Token
	u.env["TELEGRAM_API_URL"] = tg.URL()
	u.env["TELEGRAM_ALLOWED_USERS"] = "42, 43"
	s := u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")
	if out := serveOutput(s); !strings.Contains(out, "telegram @talaria_test_bot") || strings.Contains(out, tg.Token) {
		t.Fatalf("ready line:\n%s", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	tg.Send(99, 0, "let me in")
	tg.Send(99, 0, "please")
	tg.Send(42, 0, "hi there")
	sent, err := tg.WaitSent(ctx, func(m []faketelegram.Message) bool { return countTo(m, 42) >= 1 })
	if err != nil {
		t.Fatalf("no reply to the allowed user: %v (sent %+v)", err, sent)
	}
	var reply faketelegram.Message
	for _, m := range sent {
		if m.ChatID == 42 {
			reply = m
		}
	}
	if !strings.Contains(reply.Text, "<b>Talaria</b>") || !strings.Contains(reply.Text, "&lt;3") || reply.ParseMode != "HTML" || reply.ReplyTo == 0 {
		t.Fatalf("reply %+v", reply)
	}
	if n := countTo(sent, 99); n != 1 {
		t.Errorf("the stranger got %d messages, want one refusal: %+v", n, sent)
	}
	if reqs := model.Requests(); len(reqs) != 1 || !strings.Contains(string(reqs[0].Raw), "hi there") {
		t.Errorf("model requests: %d, want only the allowed user's", len(reqs))
	}
	deadline := time.Now().Add(10 * time.Second)
	for tg.Pending() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := tg.Pending(); n != 0 {
		t.Errorf("%d updates not acknowledged", n)
	}
}

func countTo(msgs []faketelegram.Message, chat int64) int {
	n := 0
	for _, m := range msgs {
		if m.ChatID == chat {
			n++
		}
	}
	return n
}

// telegramServe starts serve answering the fake bot for user 42 (env,
// pairs of names and values, may set more).
func telegramServe(t *testing.T, model *fakellm.Server, env ...string) (*user, *faketelegram.Server, *server) {
	t.Helper()
	return telegramServeConfig(t, model, "", env...)
}

// telegramServeConfig is telegramServe with config.yaml holding config
// (none when "").
func telegramServeConfig(t *testing.T, model *fakellm.Server, config string, env ...string) (*user, *faketelegram.Server, *server) {
	t.Helper()
	tg := faketelegram.Start("123:secret-token", "talaria_test_bot")
	t.Cleanup(tg.Close)
	u := newUser(t, model.URL())
	if config != "" {
		writeConfig(config)(t, u)
	}
	u.env["TELEGRAM_BOT_TOKEN"] = tg.Token
	u.env["TELEGRAM_API_URL"] = tg.URL()
	u.env["TELEGRAM_ALLOWED_USERS"] = "42"
	for i := 0; i+1 < len(env); i += 2 {
		u.env[env[i]] = env[i+1]
	}
	s := u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")
	return u, tg, s
}

// waitText waits until a message to chat 42 contains text, and returns it.
func waitText(t *testing.T, tg *faketelegram.Server, text string, within time.Duration) faketelegram.Message {
	t.Helper()
	return waitTextIn(t, tg, 42, text, within)
}

// waitTextIn waits until a message to chat contains text, and returns it.
func waitTextIn(t *testing.T, tg *faketelegram.Server, chat int64, text string, within time.Duration) faketelegram.Message {
	t.Helper()
	var found faketelegram.Message
	waitTelegram(t, tg, within, fmt.Sprintf("a message to %d with %q", chat, text), func(ms []faketelegram.Message) bool {
		for _, m := range ms {
			if m.ChatID == chat && strings.Contains(m.Text, text) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// waitTelegram waits until ok holds for what the bot sent; what names it
// when it does not within the time.
func waitTelegram(t *testing.T, tg *faketelegram.Server, within time.Duration, what string, ok func([]faketelegram.Message) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if sent, err := tg.WaitSent(ctx, ok); err != nil {
		t.Fatalf("no %s within %s; sent:\n%+v", what, within, sent)
	}
}

// TestTelegramControls: an approval shows buttons and pressing Approve
// runs the command; /approve does the same; /stop ends a turn that would
// never end, interrupted, and the chat says so.
func TestTelegramControls(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "rm1", Name: "terminal", Arguments: `{"command":"rm -rf ./first"}`}),
		fakellm.TextStep("Removed first."),
		fakellm.ToolStep(fakellm.ToolCall{ID: "rm2", Name: "terminal", Arguments: `{"command":"rm -rf ./second"}`}),
		fakellm.TextStep("Removed second."),
		fakellm.Step{Hang: true},
	)
	defer model.Close()
	u, tg, _ := telegramServe(t, model)
	work := config.Default(u.home).WorkspaceDir()
	for _, d := range []string{"first", "second"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// A button press.
	tg.Send(42, 0, "remove first")
	ask := waitText(t, tg, "rm -rf ./first", 30*time.Second)
	if len(ask.Buttons) == 0 || ask.Buttons[0][0].Text != "Approve once" {
		t.Fatalf("the approval has no buttons: %+v", ask)
	}
	if _, err := os.Stat(filepath.Join(work, "first")); err != nil {
		t.Fatalf("the command ran before it was approved: %v", err)
	}
	// Button data made without the message, from the call id the model
	// chose, decides nothing.
	sum := sha256.Sum256([]byte("rm1"))
	for _, forged := range []string{"ap:once:" + hex.EncodeToString(sum[:8]), "ap:once:" + hex.EncodeToString(sum[:16])} {
		tg.Press(42, ask, forged)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if a, err := tg.WaitAnswers(ctx, func(a []faketelegram.Answer) bool { return len(a) == 2 }); err != nil || a[0].Text != "This button is no longer current." || a[1].Text != a[0].Text {
		t.Fatalf("forged presses answered %+v (%v)", a, err)
	}
	if _, err := os.Stat(filepath.Join(work, "first")); err != nil {
		t.Fatalf("a forged press ran the command: %v", err)
	}
	tg.Press(42, ask, ask.Buttons[0][0].Data)
	waitText(t, tg, "Removed first.", 30*time.Second)
	if _, err := os.Stat(filepath.Join(work, "first")); !os.IsNotExist(err) {
		t.Fatalf("the approved command did not run: %v", err)
	}

	// /approve.
	tg.Send(42, 0, "remove second")
	waitText(t, tg, "rm -rf ./second", 30*time.Second)
	tg.Send(42, 0, "/approve")
	waitText(t, tg, "Approved: rm -rf ./second", 30*time.Second)
	waitText(t, tg, "Removed second.", 30*time.Second)

	// /stop of a slow turn.
	tg.Send(42, 0, "think for ever")
	if err := model.WaitRequests(t.Context(), 5); err != nil {
		t.Fatal(err)
	}
	// The turn would think for ever: only the stop ends it. How long a
	// stop takes is BenchmarkStop's to show.
	stopped := time.Now()
	tg.Send(42, 0, "/stop")
	waitText(t, tg, "Stopped.", time.Minute)
	t.Logf("/stop answered after %s", time.Since(stopped).Round(time.Millisecond))
	waitFor(t, time.Minute, func() bool {
		out, _, _ := u.run(time.Minute, "sessions", "show", "telegram.dm.42", "-o", "json")
		return strings.Contains(out, `"status": "interrupted"`)
	})
	t.Logf("/stop to a turn recorded interrupted: %s", time.Since(stopped).Round(time.Millisecond))
	for _, m := range tg.Sent() {
		if strings.Contains(m.Text, "Removed first.") && m.Edits > 0 {
			t.Errorf("a reply was edited: %+v", m)
		}
	}
	if n := countText(tg.Sent(), "Removed first."); n != 1 {
		t.Errorf("the first reply was sent %d times", n)
	}
}

func countText(msgs []faketelegram.Message, text string) int {
	n := 0
	for _, m := range msgs {
		if strings.Contains(m.Text, text) {
			n++
		}
	}
	return n
}

// TestTelegramExactlyOnce: serve SIGKILLed while a chat message's turn
// runs, and again right after a reply went out: after each restart every
// message is answered, each exactly once.
func TestTelegramExactlyOnce(t *testing.T) {
	t.Parallel()
	slow := fakellm.TextStep("First answer, after a while.")
	slow.Delay = 3 * time.Second
	model := fakellm.New(slow, fakellm.TextStep("First answer, after a while."), fakellm.TextStep("Second answer."), fakellm.TextStep("Second answer."))
	defer model.Close()
	u, tg, s := telegramServe(t, model)
	restart := func() *server {
		s.kill()
		return u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")
	}

	tg.Send(42, 0, "first question")
	if err := model.WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	s = restart() // the model call in flight dies with serve; the turn goes on after
	waitText(t, tg, "First answer", time.Minute)

	tg.Send(42, 0, "second question")
	waitText(t, tg, "Second answer.", time.Minute)
	// Right after the reply is recorded as sent, a restart sends nothing
	// again. (Between Telegram taking a message and the record of it lies
	// a window no bot can close: the Bot API has no idempotency key and no
	// way to read the chat back; docs/gateway.md says so.)
	waitGatewayIdle(t, u)
	s = restart()
	tg.Send(42, 0, "/status")
	waitText(t, tg, "Nothing is running.", time.Minute)
	time.Sleep(2 * time.Second) // room for a duplicate to show
	for _, text := range []string{"First answer", "Second answer."} {
		if n := countText(tg.Sent(), text); n != 1 {
			t.Errorf("%q was sent %d times: %+v", text, n, tg.Sent())
		}
	}
	if n := tg.Pending(); n != 0 {
		t.Errorf("%d updates not acknowledged", n)
	}
	_ = s
}

// TestTelegramBusyModes: with busy_input_mode queue, three messages sent
// while a turn runs are answered in order, after it; /steer reaches the
// running turn (the model's next call reads it); gateway status counts the
// messages waiting.
func TestTelegramBusyModes(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		switch {
		case strings.Contains(last.Content, "slow task"):
			return fakellm.ToolStep(fakellm.ToolCall{ID: "sl", Name: "terminal", Arguments: `{"command":"sleep 6"}`})
		case last.Role == "tool":
			return fakellm.TextStep("slow task done; saw: " + last.Content)
		}
		return fakellm.TextStep("answer to " + last.Content)
	}))
	defer model.Close()
	u, tg, _ := telegramServe(t, model, "TALARIA_BUSY_INPUT_MODE", "queue")
	tg.Send(42, 0, "a slow task")
	if err := model.WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	tg.Send(42, 0, "/steer mention the weather")
	for _, m := range []string{"one", "two", "three"} {
		tg.Send(42, 0, m)
	}
	// gateway status counts the five messages taken and not answered (the
	// steer waits with the turn it reached).
	var status string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if status, _, _ = u.run(time.Minute, "gateway", "status", "-o", "json"); strings.Contains(status, `"in_flight": 5`) {
			break
		}
	}
	if !strings.Contains(status, `"in_flight": 5`) {
		t.Errorf("gateway status while five messages wait:\n%s", status)
	}
	done := waitText(t, tg, "slow task done", time.Minute)
	waitText(t, tg, "answer to three", time.Minute)
	var answers []string
	for _, m := range tg.Sent() {
		if strings.HasPrefix(m.Text, "answer to ") {
			answers = append(answers, strings.TrimPrefix(m.Text, "answer to "))
		}
	}
	if strings.Join(answers, ",") != "one,two,three" {
		t.Errorf("queued answers in the order %q, want one,two,three", answers)
	}
	if !strings.Contains(done.Text, "weather") {
		t.Errorf("the steer did not reach the running turn: %q", done.Text)
	}
}

// TestTelegramWrongToken: a token the Bot API refuses stops serve at
// start with one line that does not show the token.
func TestTelegramWrongToken(t *testing.T) {
	t.Parallel()
	tg := faketelegram.Start("123:right-token", "talaria_test_bot")
	defer tg.Close()
	u := newUser(t, "http://127.0.0.1:9/v1")
	u.env["TELEGRAM_BOT_TOKEN"] = "123:wrong-token"
	u.env["TELEGRAM_API_URL"] = tg.URL()
	_, stderr, code := u.run(time.Minute, "serve", "--temporal-port", "0", "--ui-port", "0")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != 2 || !strings.Contains(lines[len(lines)-1], "telegram") || strings.Contains(stderr, "wrong-token") {
		t.Fatalf("serve with a wrong token: exit %d\n%s", code, stderr)
	}
}

// TestTelegramCronDelivery: a cron job delivering to telegram:<chat> posts
// its result to that chat once per run, under the job's name.
func TestTelegramCronDelivery(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(fakellm.Request) fakellm.Step {
		return fakellm.TextStep("Overnight: all **quiet**.")
	}))
	defer model.Close()
	u, tg, _ := telegramServe(t, model)
	cronDelivering(t, u, "alerts", "telegram:42", "telegram:@someone", "telegram:<chat id>")
	m := waitText(t, tg, "all <b>quiet</b>", time.Minute)
	if !strings.Contains(m.Text, "<b>alerts") {
		t.Errorf("the delivery does not name the job: %q", m.Text)
	}
	waitRunDelivered(t, u, "alerts", "telegram:42")
	time.Sleep(time.Second)
	if n := countText(tg.Sent(), "all <b>quiet</b>"); n != 1 {
		t.Errorf("delivered %d times", n)
	}
}

// TestTelegramPairing: a stranger is let in by a code from `talaria
// gateway pair telegram`, sent once in a DM; a wrong code, a spent one
// and guessing are refused, and a stranger's message still makes no
// model call.
func TestTelegramPairing(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.TextStep("Welcome aboard."))
	defer model.Close()
	u, tg, _ := telegramServe(t, model)
	code, stderr, status := u.run(time.Minute, "gateway", "pair", "telegram")
	code = strings.TrimSpace(code)
	if status != 0 || len(code) != 9 || !strings.Contains(stderr, "/pair "+code) {
		t.Fatalf("gateway pair: exit %d %q %s", status, code, stderr)
	}
	if _, _, status := u.run(time.Minute, "gateway", "pair", "irc"); status != 2 {
		t.Errorf("pair for an unknown platform: exit %d", status)
	}
	tg.Send(77, 0, "/pair WRONG-CODE")
	waitTextIn(t, tg, 77, "not valid", 30*time.Second)
	tg.Send(77, 0, "/pair "+strings.ToLower(code))
	waitTextIn(t, tg, 77, "Paired", 30*time.Second)
	tg.Send(78, 0, "/pair "+code) // spent
	waitTextIn(t, tg, 78, "not valid", 30*time.Second)
	if n := len(model.Requests()); n != 0 {
		t.Fatalf("%d model calls before anyone allowed spoke", n)
	}
	tg.Send(77, 0, "hello")
	waitTextIn(t, tg, 77, "Welcome aboard.", 30*time.Second)
}

// TestTelegramSessions: /new starts a session without the earlier
// conversation; an idle chat starts a new one by itself; /sessions and
// /resume go back; /undo forgets the last exchange and /retry asks again;
// /usage, /model and /cron list answer.
func TestTelegramSessions(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		return fakellm.TextStep("seen: " + seenUsers(req))
	}))
	defer model.Close()
	_, tg, _ := telegramServeConfig(t, model, "gateway:\n  reset_hour: -1\n  reset_idle: 3s\n")

	tg.Send(42, 0, "alpha")
	waitText(t, tg, "seen: alpha", 30*time.Second)
	tg.Send(42, 0, "beta")
	waitText(t, tg, "seen: alpha | beta", 30*time.Second)
	tg.Send(42, 0, "/undo")
	waitText(t, tg, "Forgot the last exchange (beta)", 30*time.Second)
	tg.Send(42, 0, "gamma")
	waitText(t, tg, "seen: alpha | gamma", 30*time.Second)
	tg.Send(42, 0, "/retry")
	waitTextCount(t, tg, "seen: alpha | gamma", 2, 30*time.Second)
	tg.Send(42, 0, "/new")
	waitText(t, tg, "New session", 30*time.Second)
	tg.Send(42, 0, "delta")
	m := waitText(t, tg, "seen: delta", 30*time.Second)
	if strings.Contains(m.Text, "alpha") {
		t.Errorf("the new session holds the old conversation: %q", m.Text)
	}
	tg.Send(42, 0, "/sessions")
	waitText(t, tg, "telegram.dm.42-g1 (current)", 30*time.Second)
	tg.Send(42, 0, "/resume telegram.dm.42")
	waitText(t, tg, "Resumed telegram.dm.42.", 30*time.Second)
	tg.Send(42, 0, "/resume telegram.dm.43")
	waitText(t, tg, "Usage: /resume ID", 30*time.Second)
	tg.Send(42, 0, "epsilon")
	waitText(t, tg, "seen: alpha | gamma | epsilon", 30*time.Second)
	time.Sleep(3500 * time.Millisecond) // idle past reset_idle
	tg.Send(42, 0, "zeta")
	if m := waitText(t, tg, "seen: zeta", 30*time.Second); strings.Contains(m.Text, "alpha") {
		t.Errorf("an idle chat kept its session: %q", m.Text)
	}
	tg.Send(42, 0, "/usage")
	waitText(t, tg, "This session: 1 turns", 30*time.Second)
	tg.Send(42, 0, "/model gpt-9")
	waitText(t, tg, "is not a model this server offers", 30*time.Second)
	tg.Send(42, 0, "/model")
	waitText(t, tg, "This chat uses the server's model.", 30*time.Second)
	tg.Send(42, 0, "/cron list")
	waitText(t, tg, "No scheduled jobs.", 30*time.Second)
}

// waitTextCount waits until n messages contain text.
func waitTextCount(t *testing.T, tg *faketelegram.Server, text string, n int, within time.Duration) {
	t.Helper()
	waitTelegram(t, tg, within, fmt.Sprintf("%d messages with %q", n, text), func(ms []faketelegram.Message) bool { return countText(ms, text) >= n })
}

// TestTelegramHomeDelivery: /sethome makes a chat the target of the jobs
// delivering to home.
func TestTelegramHomeDelivery(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(fakellm.Request) fakellm.Step {
		return fakellm.TextStep("Home report: fine.")
	}))
	defer model.Close()
	u, tg, _ := telegramServe(t, model)
	tg.Send(42, 0, "/sethome")
	waitText(t, tg, "This chat is home now", 30*time.Second)
	cronDelivering(t, u, "homely", "home", "home:x", "use local, home,")
	waitText(t, tg, "Home report: fine.", time.Minute)
	waitRunDelivered(t, u, "homely", "telegram:42")
}

// seenUsers joins the user messages a request holds with " | ".
func seenUsers(req fakellm.Request) string {
	var users []string
	for _, m := range req.Body.Messages {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	return strings.Join(users, " | ")
}

// waitGatewayIdle waits until every message the gateway took is answered
// (talaria gateway status: in_flight 0 for every account).
func waitGatewayIdle(t *testing.T, u *user) {
	t.Helper()
	waitFor(t, time.Minute, func() bool {
		out, _, code := u.run(time.Minute, "gateway", "status", "-o", "json")
		var accounts []struct {
			InFlight int `json:"in_flight"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &accounts) != nil || len(accounts) == 0 {
			return false
		}
		for _, a := range accounts {
			if a.InFlight != 0 {
				return false
			}
		}
		return true
	})
}
