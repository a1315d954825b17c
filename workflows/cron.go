package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// CronRunWorkflowName runs one slot of a scheduled job.
const CronRunWorkflowName = "CronRunWorkflow"

// CronRunInput is one slot of a job, as the scheduler saw the job.
type CronRunInput struct {
	JobID, JobName string
	Slot           time.Time
	Prompt         string
	PreRunScript   string
	Deliver        []string
	// Turn is the job's turn template (model, budget, working directory).
	Turn TurnInput
}

// CronSessionID is the session a slot's turn runs in.
func CronSessionID(jobID string, slot time.Time) string {
	return fmt.Sprintf("cron.%s.%d", jobID, slot.Unix())
}

// CronRunWorkflow runs a scheduled job's slot: the optional pre-run script,
// the agent turn (unattended: approvals denied), then delivery to each
// target, and records the run. A final answer of [SILENT] is not delivered.
func CronRunWorkflow(ctx workflow.Context, in CronRunInput) error {
	started := workflow.Now(ctx)
	run := turnapi.CronRunRecord{JobID: in.JobID, ScheduledAt: in.Slot, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID,
		StartedAt: &started}
	text, ref, exit, runErr := cronTurn(ctx, in)
	run.ExitReason = exit
	switch {
	case runErr != nil:
		run.Status, run.Error = turnapi.CronRunFailed, turnapi.BoundError(runErr.Error())
	case ref == 0 && strings.TrimSpace(text) == turnapi.SilentMarker:
		run.Status, run.Delivery = turnapi.CronRunCompleted, "silent: not delivered"
	default:
		run.Status = turnapi.CronRunCompleted
		run.Delivery, run.Error = deliver(ctx, in.Deliver, turnapi.DeliverInput{JobID: in.JobID, JobName: in.JobName, Slot: in.Slot,
			Text: text, Status: "completed", MessageID: ref})
		if run.Error != "" {
			run.Status = turnapi.CronRunFailed
		}
	}
	ended := workflow.Now(ctx)
	run.EndedAt = &ended
	return workflow.ExecuteActivity(storeOptions(ctx), turnapi.FinishCronRunName, turnapi.FinishCronRunInput{Run: run}).Get(ctx, nil)
}

// cronTurn produces the slot's text: the script output alone when the job
// has no prompt, otherwise the agent's final answer. A long answer comes as
// its preview and ref, the stored message delivery loads it from.
func cronTurn(ctx workflow.Context, in CronRunInput) (text string, ref int64, exit string, err error) {
	prompt := in.Prompt
	if in.PreRunScript != "" {
		var out string
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: 11 * time.Minute, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 2},
		})
		if err := workflow.ExecuteActivity(actx, turnapi.PreRunScriptName, in.PreRunScript, in.Turn.Workdir).Get(ctx, &out); err != nil {
			return "", 0, "", fmt.Errorf("pre-run script: %w", err)
		}
		if strings.TrimSpace(prompt) == "" {
			return out, 0, "script_only", nil
		}
		prompt += "\n\nOutput of the job's pre-run script:\n" + out
	}
	session := CronSessionID(in.JobID, in.Slot)
	res, err := unattendedTurn(ctx, in.Turn, session, prompt)
	if err != nil {
		return "", 0, string(StopError), err
	}
	if syncDue(in.Turn, res) && has(ctx, changeCronMemorySync) {
		startMemorySync(ctx, session, TurnWorkflowID(session, 1), res.ActiveSessionID)
	}
	if res.FinalResponse == nil {
		msg := "the turn ended without an answer"
		if res.Error != nil {
			msg = *res.Error
		}
		return "", 0, string(res.TurnExitReason), fmt.Errorf("%s (%s)", msg, res.TurnExitReason)
	}
	if res.FinalClipped {
		ref = res.FinalMessageID
	}
	return *res.FinalResponse, ref, string(res.TurnExitReason), nil
}

// deliver sends msg's text (or, when its MessageID is set, the stored
// answer it previews) to every target; webhook failures are retried with
// backoff, then recorded. It returns a summary and the errors, if any.
func deliver(ctx workflow.Context, targets []string, msg turnapi.DeliverInput) (string, string) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 4,
		},
	})
	var done, failed []string
	for _, target := range targets {
		var where string
		msg.Target = target
		err := workflow.ExecuteActivity(actx, turnapi.DeliverName, msg).Get(ctx, &where)
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %s", target, errorMessage(err)))
			continue
		}
		done = append(done, target+" → "+where)
	}
	return turnapi.BoundText(strings.Join(done, "; "), turnapi.MaxErrorBytes), turnapi.BoundError(strings.Join(failed, "; "))
}
