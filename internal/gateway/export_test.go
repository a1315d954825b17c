package gateway

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// StartEngine starts a real engine for the gateway's tests (an embedded
// Temporal, a SQLite store, the turn worker) with modelURL as its model,
// stopped with the test; it returns the engine's configuration too.
func StartEngine(t testing.TB, ctx context.Context, modelURL string) (config.Config, *engine.Runtime) {
	t.Helper()
	cfg := config.Default(t.TempDir())
	cfg.Model.BaseURL, cfg.Model.APIKey, cfg.Model.Name = modelURL, "k", "fake-model"
	rt, err := engine.Start(ctx, cfg, engine.Options{Private: true, Worker: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return cfg, rt
}

// NewForTest is a gateway over a store alone, without Temporal and
// without a worker: enough for its reply activity and for the updates it
// takes without starting a workflow.
func NewForTest(st *models.Store, access map[string]*Access, ps ...Platform) *Gateway {
	g := &Gateway{rt: &engine.Runtime{Store: st}, platforms: map[string]Platform{}, access: access, groups: GroupPerUser,
		logger: slog.New(slog.DiscardHandler), holder: NewHolder(), reset: DefaultReset, now: time.Now}
	for _, p := range ps {
		g.platforms[p.Name()] = p
	}
	return g
}

// Reply is one attempt of the reply activity, by a process of its own
// (its own pace in each chat).
func (g *Gateway) Reply(ctx context.Context, in workflows.ChatReplyInput) error {
	return (&chatActivities{g: g}).reply(ctx, in)
}

// SendDraft sends the turn's first draft message as following the turn
// does, and returns its id.
func (g *Gateway) SendDraft(ctx context.Context, p Platform, in workflows.ChatReplyInput, part string) (string, error) {
	id, _, err := (&chatActivities{g: g}).sendOnce(ctx, p, draftKey(in.Platform, in.Account, in.TurnID, 0), Outgoing{ChatID: in.ChatID}, part, nil)
	return id, err
}

// Take takes one update as the gateway's poll does.
func (g *Gateway) Take(ctx context.Context, p Platform, u Update) error { return g.take(ctx, p, u) }

// InLine is how many webhook updates of a platform's chat are being
// taken or wait behind the one being taken.
func (g *Gateway) InLine(platform, chat string) int {
	g.order.mu.Lock()
	defer g.order.mu.Unlock()
	return len(g.order.waiting[platform+"/"+chat])
}

// SetWebhookWithin sets how long a webhook request may wait and take its
// updates before it is answered 503.
func (g *Gateway) SetWebhookWithin(d time.Duration) { g.webhookWithin = d }

// NoticeStranger is what a stranger's press is answered with.
const NoticeStranger = noticeStranger
