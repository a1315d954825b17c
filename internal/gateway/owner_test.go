package gateway_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketelegram"
	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/workflows"
)

// TestChatsOwnTheirSessions: two Telegram users' chats get sessions owned
// by each chat (what recall and session_search are scoped by); a chat's
// next session (/new), its background task and its scheduled job are the
// chat's too.
func TestChatsOwnTheirSessions(t *testing.T) {
	t.Parallel()
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		return fakellm.TextStep("answer to: " + last.Content)
	}))
	defer model.Close()
	tg := faketelegram.Start("9:token", "owner_bot")
	defer tg.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rt := runGateway(t, ctx, model, tg, func(o *gateway.Options) {
		o.Access = map[string]*gateway.Access{"telegram": {Users: []string{"5", "6"}}}
	})
	reply := func(chat int64, text string) string {
		t.Helper()
		var got string
		if _, err := tg.WaitSent(ctx, func(ms []faketelegram.Message) bool {
			for _, m := range ms {
				if m.ChatID == chat && strings.Contains(m.Text, text) {
					got = m.Text
					return true
				}
			}
			return false
		}); err != nil {
			t.Fatalf("no reply %q in chat %d: %v\n%+v", text, chat, err, tg.Sent())
		}
		return got
	}
	owner := func(session string) string {
		t.Helper()
		sess, err := rt.Store.Session(ctx, session)
		if err != nil {
			t.Fatalf("session %s: %v", session, err)
		}
		return sess.Owner
	}
	current := func(key string) string {
		t.Helper()
		c, ok, err := rt.Store.ChatState(ctx, key)
		if err != nil || !ok {
			t.Fatalf("chat %s: %v %v", key, ok, err)
		}
		return c.SessionID
	}

	tg.Send(5, 0, "hello from five")
	tg.Send(6, 0, "hello from six")
	reply(5, "answer to: hello from five")
	reply(6, "answer to: hello from six")
	first := current("telegram:dm:5")
	for key, session := range map[string]string{"telegram:dm:5": first, "telegram:dm:6": current("telegram:dm:6")} {
		if got := owner(session); got != key {
			t.Errorf("session %s is owned by %q, want %q", session, got, key)
		}
	}

	tg.Send(5, 0, "/new")
	reply(5, "New session")
	tg.Send(5, 0, "again")
	reply(5, "answer to: again")
	if next := current("telegram:dm:5"); next == first || owner(next) != "telegram:dm:5" {
		t.Errorf("the next session %s (after %s) is owned by %q", next, first, owner(next))
	}

	tg.Send(5, 0, "/background count the sheep")
	started := reply(5, "Started in the background")
	bg := regexp.MustCompile(`session (bg-[0-9a-f]+)`).FindStringSubmatch(started)
	if bg == nil {
		t.Fatalf("no session in %q", started)
	}
	reply(5, "answer to: count the sheep")
	if got := owner(bg[1]); got != "telegram:dm:5" {
		t.Errorf("the background session %s is owned by %q", bg[1], got)
	}

	tg.Send(6, 0, "/cron add 0 9 * * * | water the plants")
	reply(6, "Added")
	jobs, err := rt.Store.CronJobs(ctx)
	if err != nil || len(jobs) != 1 || jobs[0].Owner != "telegram:dm:6" {
		t.Fatalf("jobs %+v, %v; want one owned by chat 6", jobs, err)
	}
	run, err := rt.Cron().RunNow(ctx, jobs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Client.GetWorkflow(ctx, run.WorkflowID, "").Get(ctx, nil); err != nil {
		t.Fatalf("the job's run: %v", err)
	}
	if session := workflows.CronSessionID(jobs[0].ID, run.ScheduledAt); owner(session) != "telegram:dm:6" {
		t.Errorf("the job's run session %s is owned by %q", session, owner(session))
	}
}
