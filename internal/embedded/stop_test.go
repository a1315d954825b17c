package embedded

import (
	"context"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/primitives"
)

func TestServicesWithoutSystemWorker(t *testing.T) {
	for _, tt := range []struct {
		noSystemWorker bool
		want           []string
	}{
		{false, []string{"frontend", "history", "matching", "worker"}},
		{true, []string{"frontend", "history", "matching"}},
	} {
		got := Options{NoSystemWorker: tt.noSystemWorker}.services()
		if len(got) != len(tt.want) {
			t.Fatalf("NoSystemWorker %v: services %v, want %v", tt.noSystemWorker, got, tt.want)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("NoSystemWorker %v: services %v, want %v", tt.noSystemWorker, got, tt.want)
			}
		}
	}
	if primitives.WorkerService != "worker" {
		t.Fatalf("the worker service is named %q", primitives.WorkerService)
	}
}

// A server without the system worker runs workflows, stops, releases its
// data directory, and a full server started on the same directory finds
// the completed workflow and its result.
func TestNoSystemWorkerKeepsWorkflowsAcrossStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	s, err := Start(ctx, Options{DataDir: dir, NoSystemWorker: true})
	if err != nil {
		t.Fatalf("start without system worker: %v", err)
	}
	c := dial(t, s)
	w := startWorker(t, c)
	if got, err := runEcho(ctx, c, "one-shot", "hi"); err != nil || got != "hi!" {
		t.Fatalf("echo = %q, %v", got, err)
	}
	w.Stop()
	c.Close()
	began := time.Now()
	if err := s.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	t.Logf("stop took %v", time.Since(began)) // informative; timing is not asserted

	s2, err := Start(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatalf("restart on the same directory (lock released?): %v", err)
	}
	t.Cleanup(func() { _ = s2.Stop() })
	c2 := dial(t, s2)
	desc, err := c2.DescribeWorkflowExecution(ctx, "one-shot", "")
	if err != nil {
		t.Fatalf("describe after restart: %v", err)
	}
	if st := desc.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("workflow status after restart = %v, want completed", st)
	}
	var out string
	if err := c2.GetWorkflow(ctx, "one-shot", "").Get(ctx, &out); err != nil || out != "hi!" {
		t.Fatalf("result after restart = %q, %v", out, err)
	}
}
