package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/internal/fakellm"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/scheduler"
)

// TestCronDeliversALongAnswerInFull: a job's answer far above the preview a
// turn's result carries (3 MB) is delivered whole: delivery loads it from
// the store by its message id.
func TestCronDeliversALongAnswerInFull(t *testing.T) {
	t.Parallel()
	answer := strings.Repeat("overnight alert summary line\n", 3<<20/29)
	if len(answer) <= turnapi.MaxPreviewBytes {
		t.Fatal("the answer must be longer than the preview")
	}
	model := fakellm.New(fakellm.Step{Text: answer, ChunkSize: 256 << 10})
	defer model.Close()
	rt := startRuntime(t, model)
	ctx := context.Background()
	if _, err := rt.Store.CreateCronJob(ctx, models.CronJob{ID: "digest", Name: "digest", Schedule: "* * * * *",
		Prompt: "summarise the alerts", Enabled: true, Deliver: []string{"local"}}); err != nil {
		t.Fatal(err)
	}
	minute := time.Now().UTC().Truncate(time.Minute).Add(time.Minute)
	if res, err := scheduler.Tick(ctx, rt.Store, rt.Cron(), rt.Cron(), minute); err != nil || len(res.Started) != 1 {
		t.Fatalf("tick: %v %+v", err, res)
	}
	var run *models.CronRun
	waitFor(t, 2*time.Minute, func() bool {
		runs, _ := rt.Store.CronRuns(ctx, "digest", 1)
		if len(runs) == 1 && runs[0].EndedAt != nil {
			run = &runs[0]
		}
		return run != nil
	})
	if run.Status != models.RunCompleted {
		t.Fatalf("run = %+v", run)
	}
	files, _ := filepath.Glob(filepath.Join(rt.Config.Home, "cron", "output", "digest", "*.md"))
	if len(files) != 1 {
		t.Fatalf("delivered files: %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), strings.TrimSpace(answer)) {
		t.Fatalf("delivered %d bytes, not the whole %d-byte answer", len(data), len(answer))
	}
}
