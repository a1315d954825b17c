package gateway_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketelegram"
	"github.com/talaria-agent/talaria/internal/gateway"
	"github.com/talaria-agent/talaria/internal/gateway/telegram"
)

// runGateway starts a real engine (an embedded Temporal, a SQLite store,
// the turn worker) for model and a gateway on the fake Bot API tg, where
// user 5 may talk to the agent; tune adjusts the gateway's options. Both
// stop with the test.
func runGateway(t testing.TB, ctx context.Context, model *fakellm.Server, tg *faketelegram.Server, tune func(*gateway.Options)) *engine.Runtime {
	t.Helper()
	rt, _, _ := startGateway(t, ctx, model, tg, tune)
	return rt
}

// startGateway is runGateway, which also returns the gateway and the bot.
func startGateway(t testing.TB, ctx context.Context, model *fakellm.Server, tg *faketelegram.Server, tune func(*gateway.Options)) (*engine.Runtime, *gateway.Gateway, gateway.Platform) {
	t.Helper()
	cfg, rt := gateway.StartEngine(t, ctx, model.URL())
	logger := slog.New(slog.DiscardHandler)
	// The bot's requests end with the gateway (a long poll too).
	gctx, stop := context.WithCancel(ctx)
	bot, err := telegram.New(gctx, tg.URL(), tg.Token)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	opts := gateway.Options{Runtime: rt, Config: cfg, Platforms: []gateway.Platform{bot},
		Access: map[string]*gateway.Access{"telegram": {Users: []string{"5"}}}, Logger: logger}
	if tune != nil {
		tune(&opts)
	}
	g, err := gateway.New(opts)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); g.Run(gctx) }()
	t.Cleanup(func() { stop(); <-done; g.Close() })
	return rt, g, bot
}

// readingModel answers every request with "read: " and the text of its
// last message: a reply says what the model read.
func readingModel() *fakellm.Server {
	return fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last, _ := req.LastMessage()
		return fakellm.TextStep("read: " + last.Content)
	}))
}
