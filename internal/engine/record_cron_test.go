package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// TestRecordHistoriesCronAndReview records real histories of the two
// workflows that are not turns, CronRunWorkflow and MemoryReviewWorkflow,
// into workflows/testdata, under the same switch and rules as
// TestRecordHistories (existing files are kept unless
// TALARIA_RECORD_HISTORIES=overwrite):
//
//	TALARIA_RECORD_HISTORIES=1 go test ./internal/engine -run TestRecordHistories
func TestRecordHistoriesCronAndReview(t *testing.T) {
	t.Parallel()
	mode := recordingMode(t)
	cron := []struct {
		file  string
		steps []fakellm.Step
		job   models.CronJob
		// status is the run's recorded outcome, proof the intended path ran.
		status string
	}{
		// A prompt-only job: the turn answers, the answer is delivered to a file.
		{"cron_run_local_delivery.json", []fakellm.Step{fakellm.TextStep("all quiet overnight")},
			models.CronJob{Prompt: "summarise the alerts", Deliver: []string{"local"}}, models.RunCompleted},
		// A pre-run script whose output joins the prompt, then the turn and delivery.
		{"cron_run_pre_run_script.json", []fakellm.Step{fakellm.TextStep("the disk is 42% full")},
			models.CronJob{Prompt: "report the disk", PreRunScript: "echo disk 42% full", Deliver: []string{"local"}}, models.RunCompleted},
		// A turn that ends without an answer (the key is refused): the run
		// is recorded failed and nothing is delivered.
		{"cron_run_failed_turn.json", []fakellm.Step{{Status: 401, ErrorMessage: "key revoked"}},
			models.CronJob{Prompt: "summarise the alerts", Deliver: []string{"local"}}, models.RunFailed},
		// Since change turn-visibility: the job's turn starts with a
		// summary, details and TalariaSessionId (the files above are the
		// shape before it).
		{"cron_run_turn_visibility.json", []fakellm.Step{fakellm.TextStep("all quiet overnight")},
			models.CronJob{Prompt: "summarise the alerts", Deliver: []string{"local"}}, models.RunCompleted},
	}
	for _, c := range cron {
		t.Run(c.file, func(t *testing.T) {
			keepRecorded(t, mode, c.file)
			model := fakellm.New(fakellm.WithSteps(c.steps...))
			defer model.Close()
			rt := startRuntime(t, model)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			job := c.job
			job.ID, job.Name, job.Schedule, job.Enabled = "rec", "rec", "@daily", true
			stored, err := rt.Store.CreateCronJob(ctx, job)
			if err != nil {
				t.Fatal(err)
			}
			run, err := rt.Cron().RunNow(ctx, *stored)
			if err != nil {
				t.Fatalf("run-now: %v", err)
			}
			if err := rt.Client.GetWorkflow(ctx, run.WorkflowID, "").Get(ctx, nil); err != nil {
				t.Fatalf("cron run: %v", err)
			}
			got, err := rt.Store.CronRun(ctx, job.ID, run.ScheduledAt)
			if err != nil || got == nil || got.Status != c.status {
				t.Fatalf("run = %+v (%v), want status %s", got, err, c.status)
			}
			record(t, rt, run.WorkflowID, c.file)
			t.Logf("recorded %s (%s: %s%s)", c.file, got.Status, got.Delivery, got.Error)
		})
	}
	t.Run(memoryReviewFile, func(t *testing.T) {
		keepRecorded(t, mode, memoryReviewFile)
		model := fakellm.New(fakellm.WithResponder(func(req fakellm.Request) fakellm.Step {
			last, _ := req.LastMessage()
			switch {
			case last.Role == "tool":
				return fakellm.TextStep("recorded one preference")
			case strings.Contains(last.Content, "reviewing the conversation"):
				return toolStep("memory", `{"action":"add","target":"user","content":"Prefers dark mode."}`)
			}
			return fakellm.TextStep("Sure, dark mode it is.")
		}))
		defer model.Close()
		rt := startRuntime(t, model)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		in := workflows.TurnInput{SessionID: "rec", UserMessage: "I always want dark mode",
			Model: fakellm.DefaultModel, MemoryReviewEvery: 1, Workdir: t.TempDir()}
		if _, err := rt.RunTurn(ctx, in); err != nil {
			t.Fatal(err)
		}
		id := "review/rec/1" // the session coordinator's id for turn 1's review
		var res workflows.ConversationResult
		waitFor(t, time.Minute, func() bool {
			_, err := rt.Client.DescribeWorkflowExecution(ctx, id, "")
			var missing *serviceerror.NotFound
			return !errors.As(err, &missing)
		})
		if err := rt.Client.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
			t.Fatalf("review: %v", err)
		}
		if !res.Completed || res.FinalResponse == nil || *res.FinalResponse != "recorded one preference" {
			t.Fatalf("review result = %+v", res)
		}
		record(t, rt, id, memoryReviewFile)
	})
}

// memoryReviewFile is the history of a review that adds one memory entry.
const memoryReviewFile = "memory_review.json"

// keepRecorded skips recording file when it exists, unless mode says to
// overwrite: an existing file is a history of older code.
func keepRecorded(t *testing.T, mode, file string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join("..", "..", "workflows", "testdata", file)); err == nil && mode != "overwrite" {
		t.Skipf("%s exists (a history of older code); kept", file)
	}
}
