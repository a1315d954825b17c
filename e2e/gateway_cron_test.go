package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestTelegramCronOrigin: a job added in a chat with /cron add delivers
// its results to that chat (its origin); /cron list shows it with its
// last run; only that chat may remove it; the CLI cannot make a job
// deliver to an origin it does not have.
func TestTelegramCronOrigin(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		return fakellm.TextStep("Overnight: all **quiet**.")
	}))
	defer model.Close()
	u, tg, _ := telegramServe(t, model, "TELEGRAM_ALLOWED_USERS", "42,43")

	tg.Send(42, 0, "/cron add every day | summarise")
	waitText(t, tg, "Not added: ", 30*time.Second)
	tg.Send(42, 0, "/cron add @daily | Summarise the overnight alerts!")
	added := waitText(t, tg, "Added summarise-the-overnight-", 30*time.Second)
	name := regexp.MustCompile(`summarise-the-overnight-[0-9a-f]{4}`).FindString(added.Text)
	if name == "" || !strings.Contains(added.Text, "its results come to this chat") {
		t.Fatalf("added: %q", added.Text)
	}
	out, stderr, code := u.run(time.Minute, "cron", "show", name)
	if code != 0 || !strings.Contains(out, "origin") || !strings.Contains(out, "telegram:42") {
		t.Errorf("cron show %s: exit %d\n%s%s", name, code, out, stderr)
	}
	if _, stderr, code := u.run(time.Minute, "cron", "add", "--name", "cli", "--schedule", "@daily",
		"--prompt", "x", "--deliver", "origin"); code != 2 || !strings.Contains(stderr, "origin is the chat that made the job") {
		t.Errorf("cron add --deliver origin from the CLI: exit %d: %s", code, stderr)
	}

	if out, stderr, code := u.run(time.Minute, "cron", "run-now", name); code != 0 {
		t.Fatalf("run-now: %d %s%s", code, out, stderr)
	}
	m := waitText(t, tg, "all <b>quiet</b>", time.Minute)
	if !strings.Contains(m.Text, name) {
		t.Errorf("the delivery does not name the job: %q", m.Text)
	}
	waitRunDelivered(t, u, name, "origin")

	tg.Send(43, 0, "/cron rm "+name)
	waitTextIn(t, tg, 43, "was made in this chat", 30*time.Second)
	tg.Send(42, 0, "/cron list")
	if l := waitText(t, tg, "Scheduled jobs:", 30*time.Second); !strings.Contains(l.Text, name+" — @daily (active, made here); last run") ||
		!strings.Contains(l.Text, "completed") {
		t.Errorf("/cron list: %q", l.Text)
	}
	tg.Send(42, 0, "/cron rm "+name)
	waitText(t, tg, "Removed "+name+".", 30*time.Second)
	if n := countText(tg.Sent(), "all <b>quiet</b>"); n != 1 {
		t.Errorf("delivered %d times", n)
	}
}
