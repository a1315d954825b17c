package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
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

// ownerStopped is the failure type the attempts of a dead owner get: its
// process stopped while they ran. It is retried like any failure.
const ownerStopped = "OwnerStopped"

// maxTakeOver bounds the running workflows one start looks at.
const maxTakeOver = 5000

// takeOverWorkers is how many workflows are looked at at once.
const takeOverWorkers = 8

// takeOverResult is what a start that took over a dead owner's work did.
type takeOverResult struct {
	// Workflows is how many running workflows were looked at.
	Workflows int
	// Retried is how many attempts of the dead owner were failed, to be
	// retried now instead of after their heartbeat timeout.
	Retried int
	// Cancelled is how many attempts of the dead owner that were asked to
	// stop (their turn was stopped) were reported cancelled.
	Cancelled int
	// Capped: more workflows ran than maxTakeOver; the rest were left to
	// their heartbeat timeouts.
	Capped bool
}

// takeOver makes Temporal retry at once what the previous owner of this
// home's embedded Temporal was running when it died: every started
// activity attempt whose worker was a previous owner is failed as
// ownerStopped, with no retry delay, so it runs again now instead of
// after its heartbeat timeout (one its turn had asked to stop is reported
// cancelled); and every running workflow's sticky task queue is reset, so
// its next workflow task goes to a live worker at once instead of after
// the dead one's sticky schedule-to-start timeout. It runs before this
// process's worker starts, so no attempt it fails can be a live one of
// this process.
func (rt *Runtime) takeOver(ctx context.Context) (takeOverResult, error) {
	var out takeOverResult
	ids, err := rt.runningWorkflows(ctx)
	if err != nil {
		return out, err
	}
	out.Workflows, out.Capped = len(ids), len(ids) >= maxTakeOver
	var mu sync.Mutex
	var errs []error
	work := make(chan *workflowpb.WorkflowExecutionInfo)
	var wg sync.WaitGroup
	for range takeOverWorkers {
		wg.Go(func() {
			for info := range work {
				retried, cancelled, err := rt.takeOverWorkflow(ctx, info)
				mu.Lock()
				out.Retried += retried
				out.Cancelled += cancelled
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

// takeOverWorkflow fails (or reports cancelled) one workflow's attempts
// of a dead owner and resets its sticky task queue. A workflow or attempt
// that ended meanwhile is no error.
func (rt *Runtime) takeOverWorkflow(ctx context.Context, info *workflowpb.WorkflowExecutionInfo) (retried, cancelled int, err error) {
	wf, run := info.GetExecution().GetWorkflowId(), info.GetExecution().GetRunId()
	desc, err := rt.Client.DescribeWorkflowExecution(ctx, wf, run)
	if ended(err) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("describe %s: %w", wf, err)
	}
	var errs []error
	retry, cancel := deadAttempts(desc.GetPendingActivities(), ownerIdentity())
	for _, id := range retry {
		stopped := temporal.NewApplicationErrorWithOptions("the process running this attempt stopped", ownerStopped,
			temporal.ApplicationErrorOptions{NextRetryDelay: time.Millisecond})
		switch err := rt.Client.CompleteActivityByID(ctx, rt.Config.Temporal.Namespace, wf, run, id, nil, stopped); {
		case err == nil:
			retried++
		case !ended(err):
			errs = append(errs, fmt.Errorf("retry activity %s of %s: %w", id, wf, err))
		}
	}
	for _, id := range cancel {
		switch err := rt.Client.CompleteActivityByID(ctx, rt.Config.Temporal.Namespace, wf, run, id, nil, temporal.NewCanceledError()); {
		case err == nil:
			cancelled++
		case !ended(err):
			errs = append(errs, fmt.Errorf("cancel activity %s of %s: %w", id, wf, err))
		}
	}
	_, err = rt.Client.WorkflowService().ResetStickyTaskQueue(ctx, &workflowservice.ResetStickyTaskQueueRequest{
		Namespace: rt.Config.Temporal.Namespace, Execution: info.GetExecution(),
	})
	if err != nil && !ended(err) {
		errs = append(errs, fmt.Errorf("reset the sticky queue of %s: %w", wf, err))
	}
	return retried, cancelled, errors.Join(errs...)
}

// ended says whether err is Temporal's "not found": the workflow or the
// attempt ended before it was asked about.
func ended(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

// deadAttempts are the IDs of the attempts in pending that a previous
// owner (an owner identity other than self) was running: started ones, to
// retry, and ones asked to stop, to report cancelled. Pure.
func deadAttempts(pending []*workflowpb.PendingActivityInfo, self string) (retry, cancel []string) {
	for _, p := range pending {
		who := p.GetLastWorkerIdentity()
		if !strings.HasPrefix(who, ownerPrefix) || who == self {
			continue
		}
		switch p.GetState() {
		case enumspb.PENDING_ACTIVITY_STATE_STARTED:
			retry = append(retry, p.GetActivityId())
		case enumspb.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED:
			cancel = append(cancel, p.GetActivityId())
		}
	}
	return retry, cancel
}

// ownerFile marks, in the embedded Temporal's data directory, that an
// owner runs; Close removes it, so one found at start was left by an
// owner that died.
const ownerFile = "owner"

// claimOwnership reports whether the previous owner of dir died (it left
// ownerFile) and writes this owner's.
func claimOwnership(dir string) (crashed bool, err error) {
	path := filepath.Join(dir, ownerFile)
	_, err = os.Stat(path)
	crashed = err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := writePrivateFile(path, []byte(ownerIdentity()+"\n")); err != nil {
		return crashed, fmt.Errorf("write %s: %w", path, err)
	}
	return crashed, nil
}

// releaseOwnership removes ownerFile at a clean stop.
func releaseOwnership(dir string) { _ = os.Remove(filepath.Join(dir, ownerFile)) }

// takeOverAtStart runs takeOver when this process owns its home's embedded
// Temporal and the previous owner died (not after a clean stop, which
// leaves nothing to take over). A failure is a warning: the dead attempts
// are then retried after their heartbeat timeout, as without it.
func (rt *Runtime) takeOverAtStart(ctx context.Context) {
	if rt.Server == nil {
		return
	}
	dir := rt.ownerDir()
	crashed, err := claimOwnership(dir)
	if err != nil {
		rt.logger.Warn("could not mark the embedded Temporal as owned; a crash will not be taken over at the next start", "error", err)
	}
	if !crashed {
		return
	}
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := rt.takeOver(tctx)
	if err != nil {
		rt.logger.Warn("could not retry at once all a stopped process was running; the rest is retried after its heartbeat timeout", "error", err)
	}
	if res.Capped {
		rt.logger.Warn("more running workflows than one start takes over; the rest are retried after their heartbeat timeout", "limit", maxTakeOver)
	}
	if res.Retried+res.Cancelled > 0 {
		rt.logger.Info("retried at once what a stopped process was running", "attempts", res.Retried, "cancelled", res.Cancelled, "workflows", res.Workflows)
	}
}

// ownerDir is the embedded Temporal's data directory.
func (rt *Runtime) ownerDir() string { return filepath.Join(rt.Config.Home, "temporal") }
