package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// echoModel answers every request, after delay, with "reply for " and the
// last user message, streamed in small pieces: each turn's answer is its
// own, so mixed-up streams show.
func echoModel(delay time.Duration) *fakellm.Server {
	return fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		last := ""
		for _, m := range req.Body.Messages {
			if m.Role == "user" {
				last = m.Content
			}
		}
		return fakellm.Step{Text: "reply for " + last, Delay: delay, ChunkSize: 6}
	}))
}

// streamConcurrently sends n streaming completions at once, each in a new
// session with its own text, and returns each one's latency (request to
// the end of its stream); a wrong or mixed answer fails tb.
func streamConcurrently(tb testing.TB, base string, n int) []time.Duration {
	lat, _ := streamConcurrentlyRuns(tb, base, n)
	return lat
}

// streamConcurrentlyRuns is streamConcurrently, also returning each
// request's run id.
func streamConcurrentlyRuns(tb testing.TB, base string, n int) ([]time.Duration, []string) {
	client := sdkClient(base, testAPIKey)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	runs := make([]string, n)
	lat := timeEach(n, func(i int) {
		text := fmt.Sprintf("request %03d of the load test", i)
		var resp *http.Response
		stream := client.Chat.Completions.NewStreaming(ctx, openaisdk.ChatCompletionNewParams{
			Model: "talaria", Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage(text)},
		}, option.WithResponseInto(&resp))
		acc := openaisdk.ChatCompletionAccumulator{}
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if resp != nil {
			runs[i] = resp.Header.Get("X-Talaria-Run-Id")
		}
		switch err := stream.Err(); {
		case err != nil:
			tb.Errorf("stream %d: %v", i, err)
		case len(acc.Choices) == 0 || acc.Choices[0].Message.Content != "reply for "+text:
			tb.Errorf("stream %d: choices %+v, want the content %q", i, acc.Choices, "reply for "+text)
		}
	})
	return lat, runs
}

// turnDurations are the runs' own durations, start to end, as the store
// recorded them: the engine's part of a request's latency.
func turnDurations(tb testing.TB, base string, runs []string) []time.Duration {
	out := make([]time.Duration, 0, len(runs))
	for _, id := range runs {
		var r struct {
			StartedAt time.Time  `json:"started_at"`
			EndedAt   *time.Time `json:"ended_at"`
		}
		if status := apiCall(tb, http.MethodGet, base+"/v1/runs/"+id, nil, &r); status != http.StatusOK || r.EndedAt == nil {
			tb.Fatalf("run %q: %d %+v", id, status, r)
		}
		out = append(out, r.EndedAt.Sub(r.StartedAt))
	}
	return out
}

// cliConcurrently runs n `talaria chat -q` at once against the same serve
// (the CLI path) and returns each one's latency.
func cliConcurrently(tb testing.TB, u *user, n int) []time.Duration {
	return timeEach(n, func(i int) {
		text := fmt.Sprintf("cli request %03d of the load test", i)
		out, err := u.command(context.Background(), "chat", "-q", text).Output()
		if err != nil || !strings.Contains(string(out), "reply for "+text) {
			tb.Errorf("chat %d: %v, output %q", i, err, out)
		}
	})
}

// timeEach runs f(0..n-1) at once and returns how long each took.
func timeEach(n int, f func(i int)) []time.Duration {
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			began := time.Now()
			f(i)
			lat[i] = time.Since(began)
		})
	}
	wg.Wait()
	return lat
}

// engineConcurrently runs n turns at once through the engine's client
// path, in this process, against the same serve: what `talaria chat -q`
// does once it has started (engine.Connect, Runtime.RunMessage following
// the live events), without a process start. It returns each latency.
func engineConcurrently(tb testing.TB, u *user, n int) []time.Duration {
	cfg, err := config.Load(u.home, func(k string) string { return u.env[k] })
	if err != nil {
		tb.Fatal(err)
	}
	info, err := engine.ReadServeInfo(u.home)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rt, err := engine.Connect(ctx, cfg, info, slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatal(err)
	}
	defer rt.Close()
	return timeEach(n, func(i int) {
		text := fmt.Sprintf("engine request %03d of the load test", i)
		in := engine.TurnTemplate(cfg, u.workdir)
		in.SessionID, in.UserMessage = fmt.Sprintf("engine-load-%d-%d", time.Now().UnixNano(), i), text
		res, err := rt.RunMessage(ctx, in, workflows.BusyQueue, func(models.Event) {})
		if err != nil || res.FinalResponse == nil || *res.FinalResponse != "reply for "+text {
			tb.Errorf("engine turn %d: %v %+v", i, err, res.FinalResponse)
		}
	})
}

// percentile is the p-th percentile (0-100) of ds, nearest rank.
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

// TestScaleAPILoad: 100 concurrent streaming completions against one serve
// with a 0.5 s model all complete, each with its own answer.
func TestScaleAPILoad(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("100 concurrent turns")
	}
	model := echoModel(500 * time.Millisecond)
	defer model.Close()
	u := newUser(t, model.URL())
	_, base := u.apiServe()
	lat := streamConcurrently(t, base, 100)
	t.Logf("100 streams: p50 %s, p99 %s", percentile(lat, 50).Round(time.Millisecond), percentile(lat, 99).Round(time.Millisecond))
}

// BenchmarkAPILoad measures 100 concurrent turns with a 0.5 s model,
// against the same serve, three ways: through the API (streaming
// completions with the official OpenAI SDK), through the engine's client
// path in this process (what chat -q runs, without starting a process),
// and through 100 `talaria chat -q` processes. It reports the latency
// percentiles of each, the API's ratio to the other two, the turns' own
// duration as the store recorded it, and the API's latency beyond it.
func BenchmarkAPILoad(b *testing.B) {
	model := echoModel(500 * time.Millisecond)
	defer model.Close()
	u := newUser(b, model.URL())
	_, base := u.apiServe()
	for b.Loop() {
		api, runs := streamConcurrentlyRuns(b, base, 100)
		eng := engineConcurrently(b, u, 100)
		cli := cliConcurrently(b, u, 100)
		turns := turnDurations(b, base, runs)
		added := make([]time.Duration, len(api))
		for i := range api {
			added[i] = api[i] - turns[i]
		}
		b.ReportMetric(percentile(api, 50).Seconds(), "api-p50-s")
		b.ReportMetric(percentile(api, 99).Seconds(), "api-p99-s")
		b.ReportMetric(percentile(turns, 50).Seconds(), "turn-p50-s")
		b.ReportMetric(percentile(added, 50).Seconds(), "api-added-p50-s")
		b.ReportMetric(percentile(added, 99).Seconds(), "api-added-p99-s")
		b.ReportMetric(percentile(cli, 50).Seconds(), "cli-p50-s")
		b.ReportMetric(percentile(cli, 99).Seconds(), "cli-p99-s")
		b.ReportMetric(percentile(eng, 50).Seconds(), "engine-p50-s")
		b.ReportMetric(percentile(eng, 99).Seconds(), "engine-p99-s")
		b.ReportMetric(percentile(api, 50).Seconds()/percentile(eng, 50).Seconds(), "api/engine-p50")
		b.ReportMetric(percentile(api, 99).Seconds()/percentile(eng, 99).Seconds(), "api/engine-p99")
		b.ReportMetric(percentile(api, 50).Seconds()/percentile(cli, 50).Seconds(), "api/cli-p50")
	}
}
