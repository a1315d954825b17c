package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketelegram"
	"github.com/talaria-agent/talaria/models"
)

// TestGatewayReplicas: two `talaria gateway` beside serve; one takes the
// bot's updates (it holds the lease); when it is SIGKILLed the other takes
// over once the lease runs out (30 s), and the message sent meanwhile is
// answered, once.
func TestGatewayReplicas(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits for a lease to expire")
	}
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		return fakellm.TextStep("answer to " + last.Content)
	}))
	defer model.Close()
	tg := faketelegram.Start("123:secret-token", "talaria_test_bot")
	defer tg.Close()
	u := newUser(t, model.URL())
	u.serve(0) // without the token: only the gateways consume
	u.env["TELEGRAM_BOT_TOKEN"] = tg.Token
	u.env["TELEGRAM_API_URL"] = tg.URL()
	u.env["TELEGRAM_ALLOWED_USERS"] = "42"
	gateways := map[int]*server{}
	for range 2 {
		g := u.daemon("talaria gateway: ready", "gateway")
		if out := serveOutput(g); !strings.Contains(out, "telegram @talaria_test_bot") {
			t.Fatalf("gateway ready line:\n%s", out)
		}
		gateways[g.cmd.Process.Pid] = g
	}
	tg.Send(42, 0, "first")
	waitText(t, tg, "answer to first", time.Minute)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	info, err := engine.ReadServeInfo(u.home)
	if err != nil {
		t.Fatal(err)
	}
	store, err := models.OpenExisting(ctx, info.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	holder, _, err := store.Lease(ctx, "gateway/telegram/7000")
	if err != nil || holder == "" {
		t.Fatalf("lease holder %q (%v)", holder, err)
	}
	parts := strings.Split(holder, "/")
	pid, _ := strconv.Atoi(parts[len(parts)-2])
	consumer := gateways[pid]
	if consumer == nil {
		t.Fatalf("the lease holder %q is neither gateway (%v)", holder, gateways)
	}
	consumer.kill()
	killed := time.Now()
	tg.Send(42, 0, "second")
	// The dead holder's lease runs out after 30 s; the other gateway takes
	// it then.
	waitText(t, tg, "answer to second", 3*time.Minute)
	t.Logf("taken over and answered %s after the consumer died", time.Since(killed).Round(time.Millisecond))
	next, _, _ := store.Lease(ctx, "gateway/telegram/7000")
	if next == holder || next == "" {
		t.Errorf("the lease is %q after the holder died", next)
	}
	if out, stderr, code := u.run(time.Minute, "gateway", "status"); code != 0 || !strings.Contains(out, "telegram 7000: "+next) ||
		!strings.Contains(out, "(live); last update") {
		t.Errorf("gateway status: exit %d\n%s%s", code, out, stderr)
	}
	for _, text := range []string{"answer to first", "answer to second"} {
		if n := countText(tg.Sent(), text); n != 1 {
			t.Errorf("%q sent %d times", text, n)
		}
	}
}
