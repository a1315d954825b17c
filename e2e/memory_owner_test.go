package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketelegram"
)

// TestMemoryRecallStaysInItsChat: on a gateway shared by two people, user
// B's message on user A's topic carries no recall of A's session, while
// A's own next session recalls it.
func TestMemoryRecallStaysInItsChat(t *testing.T) {
	t.Parallel()
	w := &recallWorld{}
	model := fakellm.New(fakellm.WithResponder(w.respond))
	defer model.Close()
	u, tg, _ := telegramServeConfig(t, model, "memory:\n  recall: true\n", "TELEGRAM_ALLOWED_USERS", "42,43")
	answers := func(chat int64, n int) {
		t.Helper()
		waitTelegram(t, tg, 2*time.Minute, "an answer to chat", func(ms []faketelegram.Message) bool {
			got := 0
			for _, m := range ms {
				if m.ChatID == chat && strings.Contains(m.Text, "noted") {
					got++
				}
			}
			return got >= n
		})
	}

	tg.Send(42, 0, "my sourdough starter smells of acetone")
	answers(42, 1)
	if out, stderr, code := u.run(2*time.Minute, "memory", "summarize", "telegram.dm.42"); code != 0 || !strings.Contains(out, "summarised session telegram.dm.42") {
		t.Fatalf("memory summarize: exit %d\n%s%s", code, out, stderr)
	}

	const askB = "How often should I feed my sourdough starter?"
	tg.Send(43, 0, askB)
	answers(43, 1)
	if req := w.firstRequest(askB); req == "" || strings.Contains(req, "SUMMARY-BREAD") || strings.Contains(req, "acetone") {
		t.Fatalf("user B's first request recalls user A's session (or was not made):\n%s", req)
	}

	// A's next session recalls A's own: recall works, within its chat.
	tg.Send(42, 0, "/new")
	const askA = "Should I feed my sourdough starter more often?"
	tg.Send(42, 0, askA)
	answers(42, 2)
	if req := w.firstRequest(askA); !strings.Contains(req, "SUMMARY-BREAD") {
		t.Fatalf("user A's next session does not recall A's own:\n%s", req)
	}
}
