package engine

import (
	"context"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/fakememory"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/workflows"
)

// TestCronTurnsSyncedToMemory: with an external memory provider on (Mem0's
// fake over HTTP), a scheduled job's answered turn is recorded with it
// after the run, as a session's turns are, filed under the job's session
// and the owner of the chat that made the job.
func TestCronTurnsSyncedToMemory(t *testing.T) {
	t.Setenv("CRON_MEM0_KEY", "mem0-key") // read by the worker; not parallel
	fake := fakememory.NewMem0("mem0-key")
	defer fake.Close()
	model := fakellm.New(fakellm.WithSteps(fakellm.TextStep("ANSWER: all quiet overnight")))
	defer model.Close()
	rt := startRuntime(t, model, func(cfg *config.Config, _ *Options) {
		cfg.Memory.Recall, cfg.Memory.Provider = true, config.MemoryMem0
		cfg.Memory.Mem0 = config.Endpoint{BaseURL: fake.URL(), APIKeyEnv: "CRON_MEM0_KEY"}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stored, err := rt.Store.CreateCronJob(ctx, models.CronJob{ID: "nightly", Name: "nightly", Schedule: "@daily", Enabled: true,
		Prompt: "summarise the alerts", Deliver: []string{"local"}, Origin: "telegram:42", Owner: "telegram:dm:42"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := rt.Cron().RunNow(ctx, *stored)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Client.GetWorkflow(ctx, run.WorkflowID, "").Get(ctx, nil); err != nil {
		t.Fatalf("cron run: %v", err)
	}
	session := workflows.CronSessionID(stored.ID, run.ScheduledAt)
	waitFor(t, time.Minute, func() bool {
		for _, r := range fake.RequestsTo("POST", "/v3/memories/add/") {
			var body struct {
				Messages []struct{ Role, Content string } `json:"messages"`
				RunID    string                           `json:"run_id"`
				UserID   string                           `json:"user_id"`
			}
			if r.JSON(&body) == nil && body.RunID == session && body.UserID == "telegram:dm:42" && len(body.Messages) == 2 &&
				body.Messages[1].Content == "ANSWER: all quiet overnight" {
				return true
			}
		}
		return false
	})
}
