package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// ownerPrefix begins the worker identity of a process that runs its home's
// embedded Temporal. Only one process at a time can (it holds the data
// directory's lock), so an attempt started under another identity with
// this prefix was started by an owner that is dead now.
const ownerPrefix = "talaria-owner "

// ownerIdentity is this process's worker identity as the owner of its
// home's embedded Temporal: the prefix, pid@host and a nonce, so that a
// restart that gets the same pid (PID 1 in a container) is told apart.
var ownerIdentity = sync.OnceValue(func() string {
	host, _ := os.Hostname()
	nonce := make([]byte, 6)
	_, _ = rand.Read(nonce)
	return fmt.Sprintf("%s%d@%s %s", ownerPrefix, os.Getpid(), host, hex.EncodeToString(nonce))
})

// withOwnerIdentity makes a client's (and its workers') identity the owner's.
func withOwnerIdentity(o *client.Options) { o.Identity = ownerIdentity() }

// ErrOwnerStopped is the failure the attempts of a dead owner get: its
// process stopped while they ran. It is retried like any failure.
const ErrOwnerStopped = "OwnerStopped"

// maxTakeOver bounds the running workflows one start looks at.
const maxTakeOver = 5000

// takeOverWorkers is how many workflows are looked at at once.
const takeOverWorkers = 8

// TakeOver is what a start that took over a dead owner's work did.
type TakeOver struct {
	// Workflows is how many running workflows were looked at.
	Workflows int
	// Retried is how many attempts of the dead owner were failed, to be
	// retried now instead of after their heartbeat timeout.
	Retried int
}

// takeOver makes Temporal retry at once what the previous owner of this
// home's embedded Temporal was running when it died: every started
// activity attempt whose worker was a previous owner is failed as
// ErrOwnerStopped, with no retry delay, so it runs again now instead of
// after its heartbeat timeout; and every running workflow's sticky task
// queue is reset, so its next workflow task goes to a live worker at once
// instead of after the dead one's sticky schedule-to-start timeout.
func (rt *Runtime) takeOver(ctx context.Context) (TakeOver, error) {
	var out TakeOver
	ids, err := rt.runningWorkflows(ctx)
	if err != nil {
		return out, err
	}
	out.Workflows = len(ids)
	var mu sync.Mutex
	var errs []error
	work := make(chan *workflowpb.WorkflowExecutionInfo)
	var wg sync.WaitGroup
	for range takeOverWorkers {
		wg.Go(func() {
			for info := range work {
				n, err := rt.takeOverWorkflow(ctx, info)
				mu.Lock()
				out.Retried += n
				if err != nil && len(errs) < 3 {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		})
	}
	for _, info := range ids {
		work <- info
	}
	close(work)
	wg.Wait()
	if len(errs) > 0 {
		return out, fmt.Errorf("take over: %w", errs[0])
	}
	return out, nil
}

// runningWorkflows lists the namespace's running workflows.
func (rt *Runtime) runningWorkflows(ctx context.Context) ([]*workflowpb.WorkflowExecutionInfo, error) {
	var out []*workflowpb.WorkflowExecutionInfo
	var token []byte
	for len(out) < maxTakeOver {
		resp, err := rt.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: "ExecutionStatus = 'Running'", PageSize: 500, NextPageToken: token,
		})
		if err != nil {
			return out, fmt.Errorf("list running workflows: %w", err)
		}
		out = append(out, resp.GetExecutions()...)
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	return out, nil
}

// takeOverWorkflow fails one workflow's attempts of a dead owner and
// resets its sticky task queue; it returns how many attempts it failed.
func (rt *Runtime) takeOverWorkflow(ctx context.Context, info *workflowpb.WorkflowExecutionInfo) (int, error) {
	wf, run := info.GetExecution().GetWorkflowId(), info.GetExecution().GetRunId()
	desc, err := rt.Client.DescribeWorkflowExecution(ctx, wf, run)
	if err != nil {
		return 0, fmt.Errorf("describe %s: %w", wf, err)
	}
	failed := 0
	for _, id := range deadAttempts(desc.GetPendingActivities(), ownerIdentity()) {
		stopped := temporal.NewApplicationErrorWithOptions(
			"the process running this attempt stopped; retried at once by the next start", ErrOwnerStopped,
			temporal.ApplicationErrorOptions{NextRetryDelay: time.Millisecond})
		err := rt.Client.CompleteActivityByID(ctx, rt.Config.Temporal.Namespace, wf, run, id, nil, stopped)
		if err != nil && ctx.Err() != nil {
			return failed, err
		}
		if err == nil {
			failed++
		} // else: it ended meanwhile, or its workflow did
	}
	_, err = rt.Client.WorkflowService().ResetStickyTaskQueue(ctx, &workflowservice.ResetStickyTaskQueueRequest{
		Namespace: rt.Config.Temporal.Namespace, Execution: info.GetExecution(),
	})
	if err != nil && ctx.Err() != nil {
		return failed, fmt.Errorf("reset the sticky queue of %s: %w", wf, err)
	}
	return failed, nil
}

// deadAttempts are the IDs of the started attempts in pending whose
// worker was an owner other than self. Pure.
func deadAttempts(pending []*workflowpb.PendingActivityInfo, self string) []string {
	var out []string
	for _, p := range pending {
		who := p.GetLastWorkerIdentity()
		if p.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED && strings.HasPrefix(who, ownerPrefix) && who != self {
			out = append(out, p.GetActivityId())
		}
	}
	return out
}

// takeOverAtStart runs takeOver when this process owns its home's embedded
// Temporal and runs a worker; a failure is a warning (the dead attempts
// are then retried after their heartbeat timeout, as without it).
func (rt *Runtime) takeOverAtStart(ctx context.Context) {
	if rt.Server == nil {
		return
	}
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := rt.takeOver(tctx)
	switch {
	case err != nil:
		rt.logger.Warn("could not retry at once what a stopped process was running; it is retried after its heartbeat timeout", "error", err)
	case res.Retried > 0:
		rt.logger.Info("retried at once what a stopped process was running", "attempts", res.Retried, "workflows", res.Workflows)
	}
}
