package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/modelinfo"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// TestAnthropicCachingRecordedAndPriced (issue #19, criterion 2): every
// request of a turn on Anthropic Messages carries cache_control on the
// system prompt and on the last three messages (fewer while the
// conversation is shorter); the cache reads the fake reports are recorded
// per call with the call's cost at the model's price (a read at the cache
// read price), and the turn's result adds them up.
func TestAnthropicCachingRecordedAndPriced(t *testing.T) {
	t.Parallel()
	const model = "claude-sonnet-4-5"
	steps := []fakellm.Step{}
	for i := range 4 {
		steps = append(steps, toolStep("read_file", fmt.Sprintf(`{"path":"f%d.txt"}`, i)))
	}
	l := newWireRun(t, llm.WireAnthropic, append(steps, fakellm.TextStep("done")), func(c *config.Config, _ *Options) {
		c.Model.Name = model
	})
	res := l.turn("s", "read the files", func(in *workflows.TurnInput) { in.Model = model })
	expect(t, res, workflows.StopTextResponse, true, false, 5)

	for i, r := range l.model.Requests() {
		got := r.CacheBreakpoints()
		var native struct{ Messages []struct{ Content []any } }
		decodeJSON(t, r.Raw, &native)
		n := len(native.Messages)
		want := []string{"system.0"}
		for m := max(n-3, 0); m < n; m++ {
			want = append(want, fmt.Sprintf("messages.%d.content.%d", m, len(native.Messages[m].Content)-1))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("request %d breakpoints = %v, want %v", i, got, want)
		}
	}

	rows, err := l.rt.Store.Usage(context.Background(), models.UsageFilter{SessionID: "s"})
	if err != nil || len(rows) != 1 {
		t.Fatalf("usage rows = %+v, %v", rows, err)
	}
	row := rows[0]
	if row.Provider != "anthropic" || row.Model != model || row.Calls != 5 || row.Unpriced != 0 {
		t.Fatalf("usage = %+v", row)
	}
	if row.CacheReadTokens == 0 || row.CacheWriteTokens == 0 {
		t.Fatalf("no cache reads or writes recorded: %+v", row)
	}
	info, _ := modelinfo.Bundled(model)
	want := info.Price.Cost(llm.Usage{PromptTokens: int(row.PromptTokens), CompletionTokens: int(row.CompletionTokens),
		CacheReadTokens: int(row.CacheReadTokens), CacheWriteTokens: int(row.CacheWriteTokens)})
	if math.Abs(row.CostUSD-want) > 1e-9 || row.CostUSD <= 0 {
		t.Fatalf("recorded cost %v, want %v at %s's price", row.CostUSD, want, model)
	}
	// Without the cache, the same input would have cost more.
	uncached := info.Price.Cost(llm.Usage{PromptTokens: int(row.PromptTokens), CompletionTokens: int(row.CompletionTokens)})
	if row.CostUSD >= uncached {
		t.Fatalf("cost with the cache %v, without %v", row.CostUSD, uncached)
	}
	if res.Usage.CacheReadTokens != row.CacheReadTokens || math.Abs(res.Usage.CostUSD-row.CostUSD) > 1e-9 {
		t.Fatalf("turn usage %+v, recorded %+v", res.Usage, row)
	}
}

func decodeJSON(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}
