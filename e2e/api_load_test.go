package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openaisdk "github.com/openai/openai-go/v3"

	"github.com/talaria-agent/talaria/internal/fakellm"
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
	client := sdkClient(base, testAPIKey)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			text := fmt.Sprintf("request %03d of the load test", i)
			began := time.Now()
			stream := client.Chat.Completions.NewStreaming(ctx, openaisdk.ChatCompletionNewParams{
				Model: "talaria", Messages: []openaisdk.ChatCompletionMessageParamUnion{openaisdk.UserMessage(text)},
			})
			acc := openaisdk.ChatCompletionAccumulator{}
			for stream.Next() {
				acc.AddChunk(stream.Current())
			}
			lat[i] = time.Since(began)
			if err := stream.Err(); err != nil {
				errs <- fmt.Errorf("stream %d: %w", i, err)
				return
			}
			if len(acc.Choices) == 0 || acc.Choices[0].Message.Content != "reply for "+text {
				errs <- fmt.Errorf("stream %d: choices %+v, want the content %q", i, acc.Choices, "reply for "+text)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Error(err)
	}
	return lat
}

// cliConcurrently runs n `talaria chat -q` at once against the same serve
// (the CLI path) and returns each one's latency.
func cliConcurrently(tb testing.TB, u *user, n int) []time.Duration {
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range n {
		wg.Go(func() {
			text := fmt.Sprintf("cli request %03d of the load test", i)
			began := time.Now()
			cmd := u.command(context.Background(), "chat", "-q", text)
			out, err := cmd.Output()
			lat[i] = time.Since(began)
			if err != nil || !strings.Contains(string(out), "reply for "+text) {
				mu.Lock()
				tb.Errorf("chat %d: %v, output %q", i, err, out)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return lat
}

// percentile is the p-th percentile (0-100) of ds, nearest rank.
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

// TestAPILoad: 100 concurrent streaming completions against one serve
// with a 0.5 s model all complete, each with its own answer.
func TestAPILoad(t *testing.T) {
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

// BenchmarkAPILoad measures 100 concurrent turns with a 0.5 s model, once
// through the API (streaming completions, the official OpenAI SDK) and
// once through the CLI (100 `talaria chat -q`), against the same serve,
// and reports the latency percentiles of each and their ratio.
func BenchmarkAPILoad(b *testing.B) {
	model := echoModel(500 * time.Millisecond)
	defer model.Close()
	u := newUser(b, model.URL())
	_, base := u.apiServe()
	for b.Loop() {
		api := streamConcurrently(b, base, 100)
		cli := cliConcurrently(b, u, 100)
		b.ReportMetric(percentile(api, 50).Seconds(), "api-p50-s")
		b.ReportMetric(percentile(api, 99).Seconds(), "api-p99-s")
		b.ReportMetric(percentile(cli, 50).Seconds(), "cli-p50-s")
		b.ReportMetric(percentile(cli, 99).Seconds(), "cli-p99-s")
		b.ReportMetric(percentile(api, 50).Seconds()/percentile(cli, 50).Seconds(), "api/cli-p50")
	}
}
