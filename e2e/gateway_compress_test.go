package e2e

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
)

// TestTelegramCompress: /compress compacts the chat's conversation between
// turns: the next turn sees the head, the summary and the tail, not the
// middle. It refuses while a turn runs, and in a chat with no conversation.
func TestTelegramCompress(t *testing.T) {
	t.Parallel()
	// The slow turn's model call is held until /compress was refused.
	release := make(chan struct{})
	var releaseOnce sync.Once
	releaseSlow := func() { releaseOnce.Do(func() { close(release) }) }
	defer releaseSlow()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		msgs := req.Body.Messages
		if len(msgs) == 1 && strings.Contains(msgs[0].Content, "TRANSCRIPT TO SUMMARISE") {
			return fakellm.TextStep("[CONTEXT COMPACTION — REFERENCE ONLY]\n## Active Task\n- SUMMARY-MARK")
		}
		if strings.HasSuffix(seenUsers(req), "slow") {
			<-release
		}
		return fakellm.TextStep("seen: " + seenUsers(req))
	}))
	defer model.Close()
	_, tg, _ := telegramServeConfig(t, model, "compression:\n  keep_last: 2\n", "TELEGRAM_ALLOWED_USERS", "42,43")

	tg.Send(43, 0, "/compress")
	waitTextIn(t, tg, 43, "Nothing to compact: this chat's session has no conversation yet.", 30*time.Second)

	tg.Send(42, 0, "alpha")
	waitText(t, tg, "seen: alpha", 30*time.Second)
	tg.Send(42, 0, "beta")
	waitText(t, tg, "seen: alpha | beta", 30*time.Second)
	tg.Send(42, 0, "gamma")
	waitText(t, tg, "seen: alpha | beta | gamma", 30*time.Second)
	tg.Send(42, 0, "slow")
	waitFor(t, time.Minute, func() bool { // the slow turn is running
		for _, r := range model.Requests() {
			if strings.HasSuffix(seenUsers(r), "slow") {
				return true
			}
		}
		return false
	})
	tg.Send(42, 0, "/compress")
	waitText(t, tg, "A turn is running: /compress when it is done", 30*time.Second)
	releaseSlow()
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
