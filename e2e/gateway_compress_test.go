package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketelegram"
)

// TestTelegramCompress: /compress compacts the chat's conversation between
// turns: the next turn sees the head, the summary and the tail, not the
// middle. It refuses while a turn runs, and in a chat with no conversation.
func TestTelegramCompress(t *testing.T) {
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		msgs := req.Body.Messages
		if len(msgs) == 1 && strings.Contains(msgs[0].Content, "TRANSCRIPT TO SUMMARISE") {
			return fakellm.TextStep("[CONTEXT COMPACTION — REFERENCE ONLY]\n## Active Task\n- SUMMARY-MARK")
		}
		var users []string
		for _, m := range msgs {
			if m.Role == "user" {
				users = append(users, m.Content)
			}
		}
		step := fakellm.TextStep("seen: " + strings.Join(users, " | "))
		if strings.HasSuffix(users[len(users)-1], "slow") {
			step.Delay = 4 * time.Second
		}
		return step
	}))
	defer model.Close()
	tg := faketelegram.Start("123:secret-token", "talaria_test_bot")
	defer tg.Close()
	u := newUser(t, model.URL())
	if err := os.MkdirAll(u.home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(u.home, "config.yaml"), []byte("compression:\n  keep_last: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u.env["TELEGRAM_BOT_TOKEN"], u.env["TELEGRAM_API_URL"], u.env["TELEGRAM_ALLOWED_USERS"] = tg.Token, tg.URL(), "42,43"
	u.daemon("talaria serve: ready", "serve", "--temporal-port", "0", "--ui-port", "0")

	tg.Send(43, 0, "/compress")
	waitTextIn(t, tg, 43, "Nothing to compact: this chat's session has no conversation yet.", 30*time.Second)

	tg.Send(42, 0, "alpha")
	waitText(t, tg, "seen: alpha", 30*time.Second)
	tg.Send(42, 0, "beta")
	waitText(t, tg, "seen: alpha | beta", 30*time.Second)
	tg.Send(42, 0, "gamma")
	waitText(t, tg, "seen: alpha | beta | gamma", 30*time.Second)
	tg.Send(42, 0, "slow")
	time.Sleep(time.Second) // the slow turn is running
	tg.Send(42, 0, "/compress")
	waitText(t, tg, "A turn is running: /compress when it is done", 30*time.Second)
	waitText(t, tg, "seen: alpha | beta | gamma | slow", 30*time.Second)

	tg.Send(42, 0, "/compress")
	waitText(t, tg, "Compacting the conversation…", 30*time.Second)
	waitText(t, tg, "Compacted: ~", time.Minute)
	tg.Send(42, 0, "epsilon")
	m := waitText(t, tg, "| epsilon", time.Minute)
	if !strings.HasPrefix(m.Text, "seen: alpha | beta") || !strings.Contains(m.Text, "SUMMARY-MARK") ||
		!strings.HasSuffix(m.Text, "slow | epsilon") || strings.Contains(m.Text, "gamma") {
		t.Errorf("the turn after /compress saw %q; want the head, the summary and the tail, without the middle", m.Text)
	}
	if n := tg.Pending(); n != 0 {
		t.Errorf("%d updates not acknowledged", n)
	}
}
