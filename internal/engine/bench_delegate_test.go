package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/workflows"
)

// delegationModel answers a parent ("PARENT" in its message) by delegating
// three tasks, then by a final answer once it reads their reports, and a
// baseline parent ("BASELINE") by one read_file call; a task answers at
// once. Every reply takes delay.
func delegationModel(delay time.Duration) fakellm.Responder {
	return func(req fakellm.Request) fakellm.Step {
		first, last := "", ""
		for _, m := range req.Body.Messages {
			if m.Role == "user" && first == "" {
				first = m.Content
			}
			last = m.Role
		}
		var step fakellm.Step
		switch {
		case last == "tool":
			step = fakellm.TextStep("all done")
		case strings.HasPrefix(first, "PARENT"):
			step = fakellm.ToolStep(fakellm.ToolCall{ID: "d1", Name: "delegate_task",
				Arguments: `{"tasks":[{"goal":"CHILD one"},{"goal":"CHILD two"},{"goal":"CHILD three"}]}`})
		case strings.HasPrefix(first, "BASELINE"):
			step = fakellm.ToolStep(fakellm.ToolCall{ID: "r1", Name: "read_file", Arguments: `{"path":"go.mod"}`})
		default:
			step = fakellm.TextStep("child done")
		}
		step.Delay = delay
		return step
	}
}

// BenchmarkDelegation (issue #18, criterion 6): 20 parent turns at once,
// each delegating 3 tasks, against one runtime and a model that takes
// 200 ms per reply. The ideal wall time is three replies in a row (the
// parent's delegation, the tasks' answers side by side, the parent's final
// answer): 600 ms. parent-B/child is what a task adds to its parent's
// history: the parent's bytes, less those of a parent making one ordinary
// tool call instead, per task.
func BenchmarkDelegation(b *testing.B) {
	const parents, children, delay = 20, 3, 200 * time.Millisecond
	model := fakellm.New(fakellm.WithoutRequestBodies(), fakellm.WithResponder(delegationModel(delay)))
	defer model.Close()
	rt := startRuntime(b, model)
	workdir := b.TempDir()
	turn := func(session, msg string) workflows.ConversationResult {
		res, err := rt.RunTurn(context.Background(), workflows.TurnInput{SessionID: session, UserMessage: msg,
			Model: fakellm.DefaultModel, MaxIterations: 10, Workdir: workdir})
		if err != nil || !res.Completed {
			b.Fatalf("turn %s: %v %+v", session, err, res)
		}
		return res
	}
	base := turn("baseline", "BASELINE")
	_, baseBytes := iterationSizes(b, rt, base.TurnID)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var wg sync.WaitGroup
		results := make([]workflows.ConversationResult, parents)
		for p := 0; p < parents; p++ {
			wg.Add(1)
			go func(p int) {
				defer wg.Done()
				results[p] = turn(fmt.Sprintf("parent-%d-%d", i, p), "PARENT go")
			}(p)
		}
		wg.Wait()
		wall := time.Since(start)
		b.ReportMetric(wall.Seconds(), "s/wall")
		b.ReportMetric(wall.Seconds()/(3*delay).Seconds(), "x-ideal")
		_, parentBytes := iterationSizes(b, rt, results[0].TurnID)
		b.ReportMetric(float64(parentBytes-baseBytes)/children, "parent-B/child")
		b.ReportMetric(float64(parentBytes), "parent-B")
	}
}
