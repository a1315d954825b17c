package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/modelinfo"
	"github.com/talaria-agent/talaria/workflows"
)

// cachingModel is the model of a 20-call turn: 19 replies that each read a
// file, then the answer.
func cachingModel(calls int) fakellm.Responder {
	return func(req fakellm.Request) fakellm.Step {
		done := 0
		for _, m := range req.Body.Messages {
			if m.Role == "tool" {
				done++
			}
		}
		if done >= calls-1 {
			return fakellm.TextStep("I have read everything.")
		}
		return fakellm.ToolStep(fakellm.ToolCall{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"notes-%d.txt"}`, done)})
	}
}

// cachingRun is one 20-call turn against the Anthropic fake with caching
// layout caching; it returns the turn's usage and its cost at
// claude-sonnet-4's price.
func cachingRun(b *testing.B, caching string, calls int) (llm.Usage, float64) {
	model := fakellm.New(fakellm.WithResponder(cachingModel(calls)))
	defer model.Close()
	rt := startRuntime(b, model, func(c *config.Config, _ *Options) {
		c.Model.Provider, c.Model.Caching, c.Model.Name = config.ProviderAnthropic, caching, "claude-sonnet-4-5"
	})
	defer rt.Close()
	workdir := b.TempDir()
	res, err := rt.RunTurn(context.Background(), workflows.TurnInput{SessionID: "cache-" + caching, UserMessage: "Read the notes, one file at a time.",
		Model: "claude-sonnet-4-5", MaxIterations: calls + 5, Workdir: workdir})
	if err != nil || !res.Completed || res.APICalls != calls {
		b.Fatalf("turn: %v completed=%v calls=%d", err, res.Completed, res.APICalls)
	}
	u := llm.Usage{PromptTokens: int(res.Usage.PromptTokens), CompletionTokens: int(res.Usage.CompletionTokens),
		CacheReadTokens: int(res.Usage.CacheReadTokens), CacheWriteTokens: int(res.Usage.CacheWriteTokens)}
	info, _ := modelinfo.Bundled("claude-sonnet-4-5")
	return u, info.Price.Cost(u)
}

// BenchmarkPromptCaching (issue #19, criterion 6): the same 20-call turn
// (19 tool calls and the answer) against the Anthropic fake, whose prompt
// cache behaves as the API documents (breakpoint prefixes, 1,024 tokens at
// least), without cache breakpoints and with system_and_3. It reports the
// input tokens of the turn, those read from and written to the cache, and
// the input billed as plain-input equivalents at claude-sonnet-4's prices
// (a read at 0.1×, a write at 1.25×), the turns' costs and their ratio.
// The input of the two runs differs a little: the breakpoints are bytes of
// the request too.
func BenchmarkPromptCaching(b *testing.B) {
	const calls = 20
	for i := 0; i < b.N; i++ {
		plain, plainCost := cachingRun(b, llm.CacheNone, calls)
		cached, cachedCost := cachingRun(b, llm.CacheSystemAnd3, calls)
		info, _ := modelinfo.Bundled("claude-sonnet-4-5")
		billed := func(u llm.Usage) float64 {
			p := info.Price
			rest := u.PromptTokens - u.CacheReadTokens - u.CacheWriteTokens
			return float64(rest) + float64(u.CacheReadTokens)*p.CacheRead/p.Input + float64(u.CacheWriteTokens)*p.CacheWrite/p.Input
		}
		b.ReportMetric(float64(plain.PromptTokens), "input-tok-none")
		b.ReportMetric(float64(cached.PromptTokens), "input-tok-cached")
		b.ReportMetric(billed(plain), "billed-tok-none")
		b.ReportMetric(float64(cached.CacheReadTokens), "cache-read-tok")
		b.ReportMetric(float64(cached.CacheWriteTokens), "cache-write-tok")
		b.ReportMetric(billed(cached), "billed-tok-cached")
		b.ReportMetric(plainCost*1e6, "µUSD-none")
		b.ReportMetric(cachedCost*1e6, "µUSD-cached")
		if cachedCost > 0 {
			b.ReportMetric(plainCost/cachedCost, "cost-ratio")
		}
	}
}
