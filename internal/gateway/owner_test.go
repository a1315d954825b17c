package gateway_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/engine"
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
	ctx, rt, tg := ownerGateway(t, func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		return fakellm.TextStep("answer to: " + last.Content)
	}, "5", "6")
	reply := func(chat int64, text string) string {
		t.Helper()
		return sentTo(ctx, t, tg, chat, text)
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

// TestCommandsOnAnotherOwnersSession: when the session a chat's key names
// is held by another owner, the chat's commands that read or change it
// are refused with one line, not retried, and /new starts the chat's own
// session without retiring the other owner's.
func TestCommandsOnAnotherOwnersSession(t *testing.T) {
	t.Parallel()
	ctx, rt, tg := ownerGateway(t, func(fakellm.Request) fakellm.Step { return fakellm.TextStep("answered") }, "7")
	taken := gateway.SessionID("telegram:dm:7")
	if _, err := rt.Store.EnsureOwnedSession(ctx, taken, "slack:dm:U1"); err != nil {
		t.Fatal(err)
	}
	said := func(text string) {
		t.Helper()
		sentTo(ctx, t, tg, 7, text)
	}
	for _, cmd := range []string{"/undo", "/usage", "/stop", "/compress"} {
		before := len(tg.Sent())
		tg.Send(7, 0, cmd)
		if _, err := tg.WaitSent(ctx, func(ms []faketelegram.Message) bool { return len(ms) > before }); err != nil {
			t.Fatalf("%s: no answer: %v", cmd, err)
		}
		if got := tg.Sent()[before].Text; !strings.Contains(got, "belongs to someone else") {
			t.Fatalf("%s answered %q", cmd, got)
		}
	}
	tg.Send(7, 0, "/new")
	said("New session")
	if retired, err := rt.Store.Retired(ctx, []string{taken}); err != nil || len(retired) != 0 {
		t.Fatalf("the other owner's session was retired: %v %v", retired, err)
	}
	tg.Send(7, 0, "hello")
	said("answered")
	c, _, err := rt.Store.ChatState(ctx, "telegram:dm:7")
	if err != nil || c.SessionID == taken {
		t.Fatalf("the chat's session is %q (%v)", c.SessionID, err)
	}
	if sess, err := rt.Store.Session(ctx, c.SessionID); err != nil || sess.Owner != "telegram:dm:7" {
		t.Fatalf("the chat's new session: %+v %v", sess, err)
	}
}

// ownerGateway runs a gateway whose model answers with respond, on a fake
// Telegram that lets the users in; the context bounds the test.
func ownerGateway(t *testing.T, respond fakellm.Responder, users ...string) (context.Context, *engine.Runtime, *faketelegram.Server) {
	t.Helper()
	model := fakellm.New(fakellm.WithResponder(respond))
	t.Cleanup(model.Close)
	tg := faketelegram.Start("9:token", "owner_bot")
	t.Cleanup(tg.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	rt := runGateway(t, ctx, model, tg, func(o *gateway.Options) {
		o.Access = map[string]*gateway.Access{"telegram": {Users: users}}
	})
	return ctx, rt, tg
}

// sentTo waits for a message to chat holding text and returns it whole.
func sentTo(ctx context.Context, t *testing.T, tg *faketelegram.Server, chat int64, text string) string {
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
		t.Fatalf("no %q in chat %d: %v\n%+v", text, chat, err, tg.Sent())
	}
	return got
}
