package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketelegram"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// TestPlatformJoinsLater: a gateway that started without a platform (it
// did not answer then) takes it on when it answers: its waiting messages
// are taken and answered from then on.
func TestPlatformJoinsLater(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	model := fakellm.New(fakellm.TextStep("Here now."))
	defer model.Close()
	tg := faketelegram.Start("123:secret", "talaria_bot")
	defer tg.Close()
	_, g, bot := startGateway(t, ctx, model, tg, func(o *gateway.Options) { o.Platforms = nil })
	tg.Send(5, 0, "are you there?")
	// Nothing takes the message while the platform is not there: it stays
	// unacknowledged and reaches no model.
	if n, p := len(model.Requests()), tg.Pending(); n != 0 || p != 1 {
		t.Fatalf("before the platform joined: %d model requests, %d updates pending", n, p)
	}
	if err := g.Add(bot, &gateway.Access{Users: []string{"5"}}); err != nil {
		t.Fatal(err)
	}
	if err := g.Add(bot, &gateway.Access{}); err == nil {
		t.Error("a platform added twice")
	}
	if _, err := tg.WaitSent(ctx, func(ms []faketelegram.Message) bool {
		for _, m := range ms {
			if strings.Contains(m.Text, "Here now.") {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("the waiting message was not answered after the platform joined: %v", err)
	}
}
