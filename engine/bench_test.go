package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/talaria-agent/talaria/activities"
	"github.com/talaria-agent/talaria/fakellm"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/tools"
	"github.com/talaria-agent/talaria/workflows"
)

const benchIterations = 50

// BenchmarkLoopOverhead (benchmark a) measures one loop iteration (a model
// call and a tool batch, both reading and writing the SQLite store) with an
// instant scripted model: through the embedded Temporal server, and the
// same workflow code and activities run in-process by the SDK's test
// environment, without a server. The difference is the cost of durability.
func BenchmarkLoopOverhead(b *testing.B) {
	model := fakellm.New(fakellm.WithResponder(deterministicLoop(1 << 20)))
	defer model.Close()
	b.Run("temporal", func(b *testing.B) {
		rt := startRuntime(b, model)
		workdir := b.TempDir()
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			res, err := rt.RunTurn(context.Background(), workflows.TurnInput{SessionID: fmt.Sprintf("bench-%d", i), UserMessage: "go",
				Model: fakellm.DefaultModel, MaxIterations: benchIterations, Workdir: workdir})
			if err != nil || res.APICalls != benchIterations+1 {
				b.Fatalf("turn: %v %+v", err, res)
			}
		}
		reportPerIteration(b, time.Since(start))
	})
	b.Run("in-process", func(b *testing.B) {
		store, err := models.Open(context.Background(), b.TempDir()+"/talaria.db")
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		rt := startRuntime(b, model) // only for its provider configuration
		acts := &activities.Activities{Store: store, Tools: tools.Default(), Providers: providersFor(rt.Config), Stream: true,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		workdir := b.TempDir()
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			var suite testsuite.WorkflowTestSuite
			suite.SetLogger(quietTestLogger{})
			env := suite.NewTestWorkflowEnvironment()
			workflows.Register(env)
			acts.Register(env)
			env.ExecuteWorkflow(workflows.TurnWorkflowName, workflows.TurnInput{SessionID: fmt.Sprintf("inproc-%d", i),
				TurnNumber: 1, UserMessage: "go", Model: fakellm.DefaultModel, MaxIterations: benchIterations, Workdir: workdir})
			var res workflows.ConversationResult
			if err := env.GetWorkflowResult(&res); err != nil || res.APICalls != benchIterations+1 {
				b.Fatalf("turn: %v %+v", err, res)
			}
		}
		reportPerIteration(b, time.Since(start))
	})
}

func reportPerIteration(b *testing.B, d time.Duration) {
	per := d / time.Duration(b.N*(benchIterations+1))
	b.ReportMetric(float64(per.Microseconds())/1000, "ms/iteration")
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
	model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
		step := deterministicLoop(iterations)(req)
		step.Delay = 100 * time.Millisecond
		return step
	}))
	defer model.Close()
	rt := startRuntime(b, model)
	workdir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, sessions)
		for s := 0; s < sessions; s++ {
			wg.Add(1)
			go func(s int) {
				defer wg.Done()
				res, err := rt.RunTurn(context.Background(), workflows.TurnInput{SessionID: fmt.Sprintf("tp-%d-%d", i, s),
					UserMessage: "go", Model: fakellm.DefaultModel, MaxIterations: 20, Workdir: workdir})
				if err == nil && res.APICalls != iterations+1 {
					err = fmt.Errorf("api calls %d", res.APICalls)
				}
				if err != nil {
					errs <- err
				}
			}(s)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		wall := time.Since(start)
		ideal := time.Duration(iterations+1) * 100 * time.Millisecond
		b.ReportMetric(wall.Seconds(), "s/wall")
		b.ReportMetric(wall.Seconds()/ideal.Seconds(), "x-ideal")
	}
}

// BenchmarkHistoryBytes (benchmark c): history bytes per iteration for
// turns of 10, 100 and 1,000 iterations (one run each: continue-as-new off).
func BenchmarkHistoryBytes(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			model := fakellm.New(fakellm.WithResponder(deterministicLoop(n)))
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
