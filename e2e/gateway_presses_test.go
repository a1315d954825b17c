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
	"github.com/talaria-agent/talaria/internal/faketelegram"
)

// waitAnswer waits until the press of update is answered, and returns
// the notice.
func waitAnswer(t *testing.T, tg *faketelegram.Server, update int64, within time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var notice string
	answers, err := tg.WaitAnswers(ctx, func(as []faketelegram.Answer) bool {
		for _, a := range as {
			if a.Update == update {
				notice = a.Text
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("the press %d was not answered within %s; answers: %+v", update, within, answers)
	}
	return notice
}

// messageByID is the bot's message id as it is now.
func messageByID(tg *faketelegram.Server, id int64) faketelegram.Message {
	for _, m := range tg.Sent() {
		if m.ID == id {
			return m
		}
	}
	return faketelegram.Message{}
}

// TestTelegramApprovalPresses: in a group, a member who may not use the
// assistant presses Approve: the press is answered with a notice (the
// button does not spin), decides nothing and the buttons stay; the
// allowed user's press then approves, is answered, and the buttons are
// taken off the message; the command runs and the answer comes.
func TestTelegramApprovalPresses(t *testing.T) {
	t.Parallel()
	model := fakellm.New(
		fakellm.ToolStep(fakellm.ToolCall{ID: "rm1", Name: "terminal", Arguments: `{"command":"rm -rf ./first"}`}),
		fakellm.TextStep("Removed first."),
	)
	defer model.Close()
	u, tg, _ := telegramServe(t, model)
	first := filepath.Join(config.Default(u.home).WorkspaceDir(), "first")
	if err := os.MkdirAll(first, 0o755); err != nil {
		t.Fatal(err)
	}
	const group = -1001

	tg.Send(42, group, "remove first")
	ask := waitTextIn(t, tg, group, "rm -rf ./first", time.Minute)
	if len(ask.Buttons) == 0 || ask.Buttons[0][0].Text != "Approve once" {
		t.Fatalf("the approval has no buttons: %+v", ask)
	}
	stranger := tg.Press(99, ask, ask.Buttons[0][0].Data)
	if notice := waitAnswer(t, tg, stranger, 30*time.Second); !strings.Contains(notice, "Only the people allowed") {
		t.Errorf("the stranger's press was answered %q", notice)
	}
	if m := messageByID(tg, ask.ID); len(m.Buttons) == 0 {
		t.Errorf("a stranger's press took the buttons off: %+v", m)
	}
	if _, err := os.Stat(first); err != nil {
		t.Fatalf("a stranger's press ran the command: %v", err)
	}
	if n := countText(tg.Sent(), "Sorry, this assistant"); n != 0 {
		t.Errorf("the group was sent %d refusals for a press", n)
	}

	allowed := tg.Press(42, ask, ask.Buttons[0][0].Data)
	if notice := waitAnswer(t, tg, allowed, 30*time.Second); notice != "Approved once." {
		t.Errorf("the allowed press was answered %q", notice)
	}
	waitTelegram(t, tg, 10*time.Second, "the approval without its buttons", func([]faketelegram.Message) bool {
		m := messageByID(tg, ask.ID)
		return m.ID == ask.ID && len(m.Buttons) == 0
	})
	if m := messageByID(tg, ask.ID); m.Text != ask.Text {
		t.Errorf("taking the buttons off changed the text: %q, was %q", m.Text, ask.Text)
	}
	waitTextIn(t, tg, group, "Removed first.", time.Minute)
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Errorf("the approved command did not run: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := tg.WaitAnswers(ctx, func(as []faketelegram.Answer) bool { return len(as) == 2 }); err != nil {
		t.Errorf("answers: %+v, want one for each press", tg.Answers())
	}
}
