package gateway_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/faketelegram"
	"github.com/talaria-agent/talaria/internal/fakewire"
	"github.com/talaria-agent/talaria/internal/gateway"
)

// BenchmarkGatewayBurst: 50 people message the bot at once (one poll
// gives all 50 updates); each message is a new session's turn. It reports
// how long after the burst the model received each session's first
// request: the median and the last, in ms. Run it with -benchtime 1x:
// each run is a gateway of its own.
func BenchmarkGatewayBurst(b *testing.B) {
	const people = 50
	for i := 0; i < b.N; i++ {
		burst(b, people)
	}
}

func burst(b *testing.B, people int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	model := fakellm.New(fakellm.WithoutRequestBodies(), fakellm.WithResponder(func(fakellm.Request) fakellm.Step { return fakellm.TextStep("hello") }))
	defer model.Close()
	tg := faketelegram.Start("1:tok", "talaria_bot")
	defer tg.Close()
	users := make([]int64, people)
	allowed := make([]string, people)
	for i := range users {
		users[i] = int64(100 + i)
		allowed[i] = strconv.FormatInt(users[i], 10)
	}
	runGateway(b, ctx, model, tg, func(o *gateway.Options) {
		o.Access = map[string]*gateway.Access{"telegram": {Users: allowed}}
	})
	// A first message, so that everything is warm.
	tg.Send(users[0], 0, "warm up")
	if _, err := tg.WaitSent(ctx, func(m []faketelegram.Message) bool { return len(m) > 0 }); err != nil {
		b.Fatal(err)
	}
	before := len(model.Requests())
	b.ResetTimer()
	start := time.Now()
	tg.SendEach(users, "hi")
	reqs, err := fakewire.Wait(ctx, model.Requests, func(r []fakellm.Request) bool { return len(r) >= before+people })
	if err != nil {
		b.Fatalf("%d of %d first requests: %v", len(reqs)-before, people, err)
	}
	b.StopTimer()
	var after []time.Duration
	for _, r := range reqs[before:] {
		after = append(after, r.Received.Sub(start))
	}
	slices.Sort(after)
	b.ReportMetric(float64(after[len(after)/2].Milliseconds()), "ms-first-p50")
	b.ReportMetric(float64(after[len(after)-1].Milliseconds()), "ms-first-last")
}
