package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"golang.org/x/sync/errgroup"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/fakewire"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/proccpu"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// benchIterations is the length of benchmark (a)'s turns.
const benchIterations = 50

// BenchmarkLoopOverhead (benchmark a) measures one loop iteration (a model
// call and a tool batch, both reading and writing the SQLite store) with an
// instant scripted model: through the embedded Temporal server, and the
// same workflow code and activities run in-process by the SDK's test
// environment, without a server. The difference is the cost of durability.
// An iteration is the time between two consecutive requests the model
// receives within a turn; ms/iteration is the median over every iteration
// of b.N turns of 50 iterations (robust to the noise of a shared machine,
// and free of what a turn costs once), ms/iteration-mean the mean, and
// ms/turn the mean wall time of a whole turn.
func BenchmarkLoopOverhead(b *testing.B) {
	model := fakellm.New(fakellm.WithoutRequestBodies(), fakellm.WithResponder(deterministicLoop(1<<20)))
	defer model.Close()
	b.Run("temporal", func(b *testing.B) {
		rt := startRuntime(b, model)
		workdir := b.TempDir()
		measureLoop(b, model, func(n int) {
			res, err := rt.RunTurn(context.Background(), workflows.TurnInput{SessionID: fmt.Sprintf("bench-%d", n), UserMessage: "go",
				Model: fakellm.DefaultModel, MaxIterations: benchIterations, Workdir: workdir})
			if err != nil || res.APICalls != benchIterations+1 {
				b.Fatalf("turn: %v %+v", err, res)
			}
		})
	})
	b.Run("in-process", func(b *testing.B) {
		store, err := models.Open(context.Background(), b.TempDir()+"/talaria.db")
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		rt := startRuntime(b, model) // only for its provider configuration
		acts := &activities.Activities{Store: store, Tools: tools.Default(), Providers: func(m string) ([]llm.Endpoint, error) {
			return providerList(rt.Config.Model, rt.Config.FallbackProviders, m)
		}, Stream: true,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		workdir := b.TempDir()
		measureLoop(b, model, func(n int) {
			var suite testsuite.WorkflowTestSuite
			suite.SetLogger(quietTestLogger{})
			env := suite.NewTestWorkflowEnvironment()
			workflows.Register(env)
			acts.Register(env)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: fmt.Sprintf("inproc-turn-%d", n)})
			env.ExecuteWorkflow(workflows.TurnWorkflowName, workflows.TurnInput{SessionID: fmt.Sprintf("inproc-%d", n),
				TurnNumber: 1, UserMessage: "go", Model: fakellm.DefaultModel, MaxIterations: benchIterations, Workdir: workdir})
			var res workflows.ConversationResult
			if err := env.GetWorkflowResult(&res); err != nil || res.APICalls != benchIterations+1 {
				b.Fatalf("turn: %v %+v", err, res)
			}
		})
	})
}

// measureLoop runs b.N turns (after one warm-up turn) and reports the
// intervals between the model requests of each turn.
func measureLoop(b *testing.B, model *fakellm.Server, turn func(n int)) {
	turn(0)
	b.ResetTimer()
	var gaps []time.Duration
	var total time.Duration
	for i := 1; i <= b.N; i++ {
		before := len(model.Requests())
		start := time.Now()
		turn(i)
		total += time.Since(start)
		reqs := model.Requests()[before:]
		for k := 1; k < len(reqs); k++ {
			gaps = append(gaps, reqs[k].Received.Sub(reqs[k-1].Received))
		}
	}
	slices.Sort(gaps)
	var sum time.Duration
	for _, g := range gaps {
		sum += g
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(gaps[len(gaps)/2]), "ms/iteration")
	b.ReportMetric(ms(sum/time.Duration(len(gaps))), "ms/iteration-mean")
	b.ReportMetric(ms(total/time.Duration(b.N)), "ms/turn")
}

// quietTestLogger drops the test environment's logs.
type quietTestLogger struct{}

func (quietTestLogger) Debug(string, ...interface{}) {}
func (quietTestLogger) Info(string, ...interface{})  {}
func (quietTestLogger) Warn(string, ...interface{})  {}
func (quietTestLogger) Error(string, ...interface{}) {}

// BenchmarkThroughput (benchmark b): 200 sessions at once, 5 tool
// iterations each, against a model that takes 100 ms per reply. The ideal
// wall time is the 6 model calls of one session: 600 ms.
func BenchmarkThroughput(b *testing.B) {
	const sessions, iterations = 200, 5
	model := fakellm.New(fakellm.WithoutRequestBodies(), fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		step := deterministicLoop(iterations)(req)
		step.Delay = 100 * time.Millisecond
		return step
	}))
	defer model.Close()
	rt := startRuntime(b, model)
	workdir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start, cpu := time.Now(), proccpu.Seconds()
		var g errgroup.Group
		for s := 0; s < sessions; s++ {
			g.Go(func() error {
				res, err := rt.RunTurn(context.Background(), workflows.TurnInput{SessionID: fmt.Sprintf("tp-%d-%d", i, s),
					UserMessage: "go", Model: fakellm.DefaultModel, MaxIterations: 20, Workdir: workdir})
				if err == nil && res.APICalls != iterations+1 {
					err = fmt.Errorf("api calls %d", res.APICalls)
				}
				return err
			})
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		wall := time.Since(start)
		ideal := time.Duration(iterations+1) * 100 * time.Millisecond
		b.ReportMetric(wall.Seconds(), "s/wall")
		b.ReportMetric(proccpu.Seconds()-cpu, "cpu-s")
		b.ReportMetric(wall.Seconds()/ideal.Seconds(), "x-ideal")
	}
}

// BenchmarkHistoryBytes (benchmark c): history bytes per iteration for
// turns of 10, 100 and 1,000 iterations (one run each: continue-as-new off),
// and for 10 iterations whose every reply carries 1 MB of text and whose
// every tool call prints 1 MB ("10-large"): content lives in the store, so
// the bytes per iteration match those of the same turn with 16 bytes
// ("10-terminal"). The benchmark reports; TestScaleHistoryPerIterationIgnoresContentSize
// asserts the match.
func BenchmarkHistoryBytes(b *testing.B) {
	cases := []struct {
		name  string
		n     int
		steps fakellm.Responder
	}{
		{"10", 10, deterministicLoop(10)},
		{"10-terminal", 10, largeLoop(10, 16)},
		{"10-large", 10, largeLoop(10, 1<<20)},
		{"100", 100, deterministicLoop(100)},
		{"1000", 1000, deterministicLoop(1000)},
	}
	for _, c := range cases {
		n := c.n
		b.Run(c.name, func(b *testing.B) {
			model := fakellm.New(fakellm.WithResponder(c.steps))
			defer model.Close()
			rt := startRuntime(b, model)
			for i := 0; i < b.N; i++ {
				res, err := rt.RunTurn(context.Background(), workflows.TurnInput{SessionID: fmt.Sprintf("h%d-%d", n, i), UserMessage: "go",
					Model: fakellm.DefaultModel, MaxIterations: n + 5, ContinueEvery: -1, Workdir: b.TempDir()})
				if err != nil || res.APICalls != n+1 {
					b.Fatalf("turn: %v %+v", err, res)
				}
				sizes, total := iterationSizes(b, rt, res.TurnID)
				b.ReportMetric(mean(sizes), "B/iteration")
				b.ReportMetric(float64(total), "B/turn")
			}
		})
	}
}

// largeLoop is deterministicLoop with large content: every reply carries
// size bytes of text beside its terminal call, which prints size bytes;
// the final answer is size bytes too.
func largeLoop(steps, size int) fakellm.Responder {
	text := strings.Repeat("lorem ipsum ", size/12+1)[:size]
	return func(req fakellm.Request) fakellm.Step {
		n := len(req.Body.Messages)
		if len(req.Body.Tools) == 0 || n >= 2*steps+2 {
			return fakellm.Step{Text: text, ChunkSize: 256 << 10}
		}
		return fakellm.Step{Text: text, ChunkSize: 256 << 10, ToolCalls: []fakellm.ToolCall{{ID: fmt.Sprintf("c%d", n), Name: "terminal",
			Arguments: fmt.Sprintf(`{"command":"head -c %d /dev/zero | tr '\\0' a; echo %d"}`, size, n)}}}
	}
}

// BenchmarkHandoffBurst: 50 new sessions each get a message at once
// (Send, the handoff every door uses), with an instant model. It reports
// when the last handoff was accepted (durable), when the model had every
// session's first request, and the process CPU between. The runtime is
// private, as serve's is (its server takes only the credential's mutual
// TLS). Run it with -benchtime 1x: each run is its own runtime.
func BenchmarkHandoffBurst(b *testing.B) {
	const sessions = 50
	for i := 0; i < b.N; i++ {
		model := fakellm.New(fakellm.WithoutRequestBodies(), fakellm.WithResponder(func(fakellm.Request) fakellm.Step { return fakellm.TextStep("hello") }))
		rt := startRuntime(b, model, func(_ *config.Config, o *Options) { o.Private = true })
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		start, cpu := time.Now(), proccpu.Seconds()
		var g errgroup.Group
		for s := 0; s < sessions; s++ {
			g.Go(func() error {
				in := TurnTemplate(rt.Config, b.TempDir())
				in.SessionID, in.UserMessage = fmt.Sprintf("burst-%d-%d", i, s), "hi"
				return rt.Send(ctx, in.SessionID, workflows.Message{RequestID: in.SessionID, Text: "hi", Mode: workflows.BusyQueue, Turn: in})
			})
		}
		err := g.Wait()
		accepted := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := fakewire.Wait(ctx, model.Requests, func(r []fakellm.Request) bool { return len(r) >= sessions }); err != nil {
			b.Fatalf("first requests: %v", err)
		}
		b.ReportMetric(accepted.Seconds(), "s-accepted")
		b.ReportMetric(time.Since(start).Seconds(), "s-first-requests")
		b.ReportMetric(proccpu.Seconds()-cpu, "cpu-s")
		cancel()
		model.Close()
	}
}
