package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// Deliverer sends a job result to one kind of target. "local" and "webhook"
// are built in; other kinds (messenger gateways) plug in through
// Activities.Deliverers under the target's scheme ("telegram:<chat>" → "telegram").
type Deliverer interface {
	Deliver(ctx context.Context, in turnapi.DeliverInput) (where string, err error)
}

// DelivererFunc adapts a function to Deliverer.
type DelivererFunc func(ctx context.Context, in turnapi.DeliverInput) (string, error)

// Deliver implements Deliverer.
func (f DelivererFunc) Deliver(ctx context.Context, in turnapi.DeliverInput) (string, error) {
	return f(ctx, in)
}

// Deliver writes a result to its target with the deliverer of the target's
// scheme. A failure is retried by Temporal with backoff; an unknown or
// malformed target is not.
func (a *Activities) Deliver(ctx context.Context, in turnapi.DeliverInput) (string, error) {
	scheme, _, _ := strings.Cut(in.Target, ":")
	d := a.deliverer(scheme)
	if d == nil {
		return "", temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("unknown delivery target %q (this worker delivers to %s)", in.Target, a.deliveryKinds()), "BadTarget", nil)
	}
	if in.MessageID != 0 {
		m, err := a.Store.Message(ctx, in.MessageID)
		if err != nil {
			return "", fmt.Errorf("deliver: load answer %d: %w", in.MessageID, err)
		}
		in.Text = FinalText(m)
	}
	return d.Deliver(ctx, in)
}

// deliveryKinds names the kinds of target this worker delivers to: the
// built-in ones and those plugged in, sorted.
func (a *Activities) deliveryKinds() string {
	kinds := []string{"local", "webhook:<url>"}
	for scheme := range a.Deliverers {
		if scheme == "home" || scheme == "origin" {
			kinds = append(kinds, scheme)
		} else {
			kinds = append(kinds, scheme+":…")
		}
	}
	slices.Sort(kinds)
	return strings.Join(kinds, ", ")
}

func (a *Activities) deliverer(scheme string) Deliverer {
	if d, ok := a.Deliverers[scheme]; ok {
		return d
	}
	switch scheme {
	case "local":
		return DelivererFunc(a.deliverLocal)
	case "webhook":
		return DelivererFunc(deliverWebhook)
	}
	return nil
}

// LocalOutputPath is the file a local delivery of a job's slot writes:
// $TALARIA_HOME/cron/output/<job>/<slot>.md, the slot to the minute, or to
// the second for a run started by hand (not on a whole minute); <job> is
// the job's name made one safe path element (jobDirName).
func LocalOutputPath(home, jobName string, slot time.Time) string {
	layout := "2006-01-02T15-04Z"
	if slot.Second() != 0 {
		layout = "2006-01-02T15-04-05Z"
	}
	return filepath.Join(home, "cron", "output", jobDirName(jobName), slot.UTC().Format(layout)+".md")
}

// deliverLocal writes a Markdown file under $TALARIA_HOME/cron/output/<job>/.
func (a *Activities) deliverLocal(_ context.Context, in turnapi.DeliverInput) (string, error) {
	path := LocalOutputPath(a.Home, in.JobName, in.Slot)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("deliver locally: %w", err)
	}
	body := fmt.Sprintf("# %s — %s\n\n%s\n", in.JobName, in.Slot.UTC().Format(time.RFC3339), in.Text)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		return "", fmt.Errorf("deliver locally: %w", err)
	}
	return path, nil
}

// deliverWebhook POSTs the result as JSON; a non-2xx answer is an error.
func deliverWebhook(ctx context.Context, in turnapi.DeliverInput) (string, error) {
	url := strings.TrimPrefix(in.Target, "webhook:")
	payload, _ := json.Marshal(map[string]any{"job": in.JobName, "job_id": in.JobID,
		"scheduled_at": in.Slot.UTC().Format(time.RFC3339), "status": in.Status, "text": in.Text})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return "", temporal.NewNonRetryableApplicationError(fmt.Sprintf("bad webhook %q: %v", url, err), "BadTarget", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("webhook %s: %w", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("webhook %s answered %s", url, resp.Status)
	}
	return url, nil
}

// preRunCap bounds a pre-run script's output.
const preRunCap = 20000

// PreRunScript runs a job's script (bash) in dir and returns its output.
// The script is confined like a terminal command: the tools' environment
// allowlist, its own process group, and every process it started is killed
// when it ends or after ten minutes.
func (a *Activities) PreRunScript(ctx context.Context, script, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("pre-run script: working directory: %w", err)
	}
	text, code, err := tools.RunScript(ctx, script, dir, 10*time.Minute, preRunCap, a.toolPolicy())
	switch {
	case errors.Is(err, tools.ErrTimedOut):
		return fmt.Sprintf("%s\n[pre-run script timed out after 10 minutes]", text), nil
	case err != nil:
		return "", fmt.Errorf("pre-run script: %w", err)
	case code != 0:
		return fmt.Sprintf("%s\n[pre-run script exited with status %d]", text, code), nil
	}
	return text, nil
}

// FinishCronRun records how a scheduled run ended.
func (a *Activities) FinishCronRun(ctx context.Context, in turnapi.FinishCronRunInput) error {
	run, err := cronRunModel(in.Run)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("finish cron run: %v", err), "BadRunStatus", nil)
	}
	if err := a.Store.UpdateRun(ctx, run); err != nil {
		return fmt.Errorf("finish cron run %s at %s: %w", run.JobID, run.ScheduledAt.Format(time.RFC3339), err)
	}
	a.Metrics.CronRun(ctx, run.Status)
	return nil
}

// cronRunStatuses maps the statuses a run's workflow reports to the store's.
var cronRunStatuses = map[turnapi.CronRunStatus]string{
	turnapi.CronRunCompleted: models.RunCompleted,
	turnapi.CronRunFailed:    models.RunFailed,
}

// cronRunModel is the store's record of a finished run. Pure.
func cronRunModel(r turnapi.CronRunRecord) (models.CronRun, error) {
	status, ok := cronRunStatuses[r.Status]
	if !ok {
		return models.CronRun{}, fmt.Errorf("unknown run status %q", r.Status)
	}
	return models.CronRun{
		JobID: r.JobID, ScheduledAt: r.ScheduledAt, WorkflowID: r.WorkflowID, Status: status,
		StartedAt: r.StartedAt, EndedAt: r.EndedAt, ExitReason: r.ExitReason, Delivery: r.Delivery, Error: r.Error,
	}, nil
}
