package gateway_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/faketwilio"
	"github.com/talaria-agent/talaria/internal/fakewire"
	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/internal/gateway/sms"
)

// TestWebhookChatInOrder: Twilio posts each message in a request of its
// own, and several at once. A text sent after an MMS whose media is slow
// to download waits for it (it is not handed over first), while another
// person's text is answered meanwhile; both of the first person's
// messages then reach the model in the order they were sent.
func TestWebhookChatInOrder(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const (
		number = "+15550000001"
		alice  = "+15550000042"
		bob    = "+15550000043"
	)
	model := readingModel()
	defer model.Close()
	tw := faketwilio.Start(number)
	defer tw.Close()

	cfg, rt := gateway.StartEngine(t, ctx, model.URL())
	logger := slog.New(slog.DiscardHandler)
	gctx, stop := context.WithCancel(ctx)
	defer stop()
	phone, err := sms.New(gctx, sms.Options{APIURL: tw.URL(), AccountSID: tw.AccountSID, AuthToken: tw.AuthToken, From: number})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(gateway.Options{Runtime: rt, Config: cfg, Platforms: []gateway.Platform{phone},
		Access: map[string]*gateway.Access{"sms": {Users: []string{alice, bob}}}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.SetWebhookWithin(2 * time.Minute) // a busy machine's slow turn is no 503
	done := make(chan struct{})
	go func() { defer close(done); g.Run(gctx) }()
	defer func() { stop(); <-done }()
	hooks := httptest.NewServer(g.Webhooks())
	defer hooks.Close()
	tw.SetWebhook(hooks.URL + "/webhooks/sms")

	// Each webhook is posted as Twilio does, in its own request, and
	// answered when it is taken.
	type posted struct {
		body   string
		status int
		err    error
	}
	results := make(chan posted, 2)
	post := func(send func() (string, int, error), body string) {
		go func() {
			sid, status, err := send()
			// Posted again until taken, as Twilio's retries would (a
			// request that waited past the handler's bound is a 503).
			for err == nil && status != http.StatusOK && ctx.Err() == nil {
				status, err = tw.Resend(sid)
			}
			results <- posted{body, status, err}
		}()
	}
	tw.After("media", 0)
	post(func() (string, int, error) {
		return tw.MMS(alice, "see the file", faketwilio.File{ContentType: "text/csv", Data: []byte("a,b\n1,2\n")})
	}, "see the file")
	if _, err := tw.WaitHeld(ctx, func(n int) bool { return n == 1 }); err != nil {
		t.Fatal("the MMS's media was never asked for")
	}
	post(func() (string, int, error) { return tw.Text(alice, "after the file") }, "after the file")
	if _, err := fakewire.Wait(ctx, func() int { return g.InLine("sms", alice) }, func(n int) bool { return n == 2 }); err != nil {
		t.Fatal("alice's text never waited behind her MMS")
	}

	// Another person is answered while the media is held.
	if _, status, err := tw.Text(bob, "hello from bob"); err != nil || status != http.StatusOK {
		t.Fatalf("bob's text: %d %v", status, err)
	}
	answered := func(to, text string) func([]faketwilio.Message) bool {
		return func(ms []faketwilio.Message) bool {
			return slices.ContainsFunc(ms, func(m faketwilio.Message) bool { return m.To == to && strings.Contains(m.Body, "read: "+text) })
		}
	}
	if sent, err := tw.WaitSent(ctx, answered(bob, "hello from bob")); err != nil {
		t.Fatalf("bob was not answered while alice's media was held: %+v", sent)
	}
	if asked(model, "after the file") >= 0 {
		t.Fatal("alice's second text was handed over before her MMS")
	}

	tw.Release()
	for range 2 {
		if r := <-results; r.err != nil || r.status != http.StatusOK {
			t.Fatalf("the webhook of %q: %d %v", r.body, r.status, r.err)
		}
	}
	for _, text := range []string{"see the file", "after the file"} {
		if sent, err := tw.WaitSent(ctx, answered(alice, text)); err != nil {
			t.Fatalf("%q not answered: %+v", text, sent)
		}
	}
	if first, second := asked(model, "see the file"), asked(model, "after the file"); first < 0 || second < first {
		t.Fatalf("alice's messages reached the model in the order %d, %d", first, second)
	}
}
