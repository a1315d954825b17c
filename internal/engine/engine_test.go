package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/proto"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/workflows"
)

// startRuntime starts a full runtime (embedded Temporal on SQLite files,
// SQLite store, worker) in a fresh TALARIA_HOME, against model.
func startRuntime(t testing.TB, model *fakellm.Server, tune ...func(*config.Config, *Options)) *Runtime {
	t.Helper()
	home := t.TempDir()
	cfg := config.Default(home)
	cfg.Model.BaseURL = model.URL()
	cfg.Model.APIKey = "test"
	cfg.Model.Name = fakellm.DefaultModel
	opts := Options{Worker: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, f := range tune {
		f(&cfg, &opts)
	}
	rt, err := Start(context.Background(), cfg, opts)
	if err != nil {
		t.Fatalf("start runtime: %v", err)
	}
	t.Cleanup(rt.Close)
	return rt
}

// iterationSizes returns the history bytes added by each model-call
// iteration: the events from one CallModel scheduling to the next.
func iterationSizes(t testing.TB, rt *Runtime, workflowID string) (sizes []int, total int) {
	t.Helper()
	iter := rt.Client.GetWorkflowHistory(context.Background(), workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	last := -1
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		total += proto.Size(ev)
		if isCallModel(ev) {
			if last >= 0 {
				sizes = append(sizes, total-last)
			}
			last = total
		}
	}
	return sizes, total
}

func isCallModel(ev *historypb.HistoryEvent) bool {
	attrs := ev.GetActivityTaskScheduledEventAttributes()
	return attrs != nil && attrs.GetActivityType().GetName() == turnapi.CallModelName
}

// TestScaleHistoryPerIterationIsConstant runs a 200-iteration turn and checks that
// each iteration adds a bounded number of history bytes that does not grow
// with the conversation (messages live in the store, not in history).
func TestScaleHistoryPerIterationIsConstant(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("200 iterations")
	}
	const iterations = 200
	model := fakellm.New(fakellm.WithResponder(deterministicLoop(iterations)))
	defer model.Close()
	rt := startRuntime(t, model)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := rt.RunTurn(ctx, workflows.TurnInput{SessionID: "long", UserMessage: "go", Model: fakellm.DefaultModel,
		MaxIterations: iterations + 1, ContinueEvery: -1, Workdir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Completed || res.APICalls != iterations+1 {
		t.Fatalf("result = %+v", res)
	}
	sizes, total := iterationSizes(t, rt, res.TurnID)
	if len(sizes) != iterations {
		t.Fatalf("measured %d iterations, want %d", len(sizes), iterations)
	}
	const bound = 4096 // bytes per iteration, whatever the conversation length
	first, lastAvg := mean(sizes[:50]), mean(sizes[len(sizes)-50:])
	for i, s := range sizes {
		if s > bound {
			t.Fatalf("iteration %d added %d history bytes, bound %d", i+1, s, bound)
		}
	}
	if lastAvg > first*1.05+16 {
		t.Fatalf("history per iteration grows: first 50 avg %.0f B, last 50 avg %.0f B", first, lastAvg)
	}
	t.Logf("history: %d bytes total, %.0f B/iteration (first 50), %.0f B/iteration (last 50), max %d",
		total, first, lastAvg, maxOf(sizes))
	if path := os.Getenv("TALARIA_REPORT"); path != "" {
		line := fmt.Sprintf("history_bytes_per_iteration iterations=%d first50=%.0f last50=%.0f max=%d total=%d\n",
			iterations, first, lastAvg, maxOf(sizes), total)
		appendFile(t, path, line)
	}
}

func mean(xs []int) float64 {
	sum := 0
	for _, x := range xs {
		sum += x
	}
	return float64(sum) / float64(len(xs))
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func appendFile(t testing.TB, path, line string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
}
