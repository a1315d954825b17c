package embedded

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

func TestDiagTmp(t *testing.T) {
	extra := map[string]any{}
	for _, kv := range strings.Fields(os.Getenv("DIAG_DC")) {
		k, v, _ := strings.Cut(kv, "=")
		var n int
		fmt.Sscan(v, &n)
		extra[k] = n
	}
	s := startEphemeral(t, Options{DynamicConfig: extra, Ephemeral: os.Getenv("DIAG_FILE") == ""})
	c := dial(t, s)
	startWorker(t, c)
	ctx := context.Background()
	for _, id := range []string{"w1", "w2"} {
		run, _ := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: testTaskQueue}, chainWorkflow, 30)
		var n int
		if err := run.Get(ctx, &n); err != nil {
			t.Fatal(err)
		}
	}
	it := c.GetWorkflowHistory(ctx, "w2", "", false, 0)
	var prev time.Time
	var prevType string
	sums := map[string]time.Duration{}
	counts := map[string]int{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		ts := e.GetEventTime().AsTime()
		typ := e.GetEventType().String()
		if !prev.IsZero() {
			k := prevType + " -> " + typ
			sums[k] += ts.Sub(prev)
			counts[k]++
		}
		prev, prevType = ts, typ
	}
	for k, d := range sums {
		t.Logf("%-90s n=%3d avg=%v", k, counts[k], d/time.Duration(counts[k]))
	}
}

func TestDiagRPC(t *testing.T) {
	s := startEphemeral(t, Options{})
	c := dial(t, s)
	ctx := context.Background()
	startWorker(t, c)
	run, _ := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "w", TaskQueue: testTaskQueue}, signalWorkflow)
	time.Sleep(200 * time.Millisecond)
	n := 200
	st := time.Now()
	for range n {
		c.CheckHealth(ctx, &client.CheckHealthRequest{})
	}
	t.Logf("checkhealth avg %v", time.Since(st)/time.Duration(n))
	st = time.Now()
	for range n {
		c.DescribeWorkflowExecution(ctx, "w", run.GetRunID())
	}
	t.Logf("describe avg %v", time.Since(st)/time.Duration(n))
	st = time.Now()
	for range n {
		if err := c.SignalWorkflow(ctx, "w", "", "other", 1); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("signal avg %v", time.Since(st)/time.Duration(n))
}
