package cronjob

import (
	"time"

	"github.com/talaria-agent/talaria/models"
	"github.com/talaria-agent/talaria/scheduler"
)

// View is a job as `cron show -o json` prints it and /api/jobs answers
// it: snake_case keys, the catch-up window as a duration string
// ("1h0m0s"), times in RFC 3339 (UTC).
type View struct {
	ID            string     `json:"id"`
	Name          string     `json:"name"`
	Schedule      string     `json:"schedule"`
	TimeZone      string     `json:"time_zone,omitempty"`
	Enabled       bool       `json:"enabled"`
	NextRun       *time.Time `json:"next_run,omitempty"`
	Prompt        string     `json:"prompt"`
	Model         string     `json:"model,omitempty"`
	Tools         []string   `json:"tools"`
	MaxIterations int        `json:"max_iterations,omitempty"`
	PreRunScript  string     `json:"pre_run_script,omitempty"`
	Deliver       []string   `json:"deliver"`
	Origin        string     `json:"origin,omitempty"`
	Overlap       string     `json:"overlap"`
	CatchUp       string     `json:"catch_up"`
	CatchUpWindow string     `json:"catch_up_window"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
	LastScheduled *time.Time `json:"last_scheduled,omitempty"`
}

// NewView describes j; its next run is computed from now (none for a
// paused job or a schedule that no longer parses or has no slot left).
func NewView(j models.CronJob, now time.Time) View {
	v := View{ID: j.ID, Name: j.Name, Schedule: j.Schedule, TimeZone: j.TimeZone, Enabled: j.Enabled,
		Prompt: j.Prompt, Model: j.Model, Tools: NonNil(j.Toolsets), MaxIterations: j.MaxIterations,
		PreRunScript: j.PreRunScript, Deliver: NonNil(j.Deliver), Origin: j.Origin, Overlap: j.Overlap, CatchUp: j.CatchUp,
		CatchUpWindow: j.CatchUpWindow.String(), CreatedAt: j.CreatedAt.UTC(), UpdatedAt: j.UpdatedAt.UTC()}
	v.LastScheduled = utcPtr(j.LastScheduled)
	if next := NextRun(j, now); !next.IsZero() {
		v.NextRun = &next
	}
	return v
}

// NextRun is j's next slot after now, zero when it has none or is paused.
func NextRun(j models.CronJob, now time.Time) time.Time {
	if !j.Enabled {
		return time.Time{}
	}
	s, err := scheduler.ParseSchedule(j.Schedule, j.TimeZone, j.CreatedAt, j.CreatedAt)
	if err != nil {
		return time.Time{}
	}
	return s.Next(now).UTC()
}

// RunView is a run as `cron runs -o json` prints it and
// /api/jobs/{id}/runs answers it.
type RunView struct {
	ScheduledAt time.Time  `json:"scheduled_at"`
	Status      string     `json:"status"`
	ExitReason  string     `json:"exit_reason,omitempty"`
	WorkflowID  string     `json:"workflow_id,omitempty"`
	RecordedAt  time.Time  `json:"recorded_at"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	EndedAt     *time.Time `json:"ended_at,omitempty"`
	Delivery    string     `json:"delivery,omitempty"`
	Error       string     `json:"error,omitempty"`
}

// NewRunViews describes runs.
func NewRunViews(runs []models.CronRun) []RunView {
	out := make([]RunView, len(runs))
	for i, r := range runs {
		out[i] = RunView{ScheduledAt: r.ScheduledAt.UTC(), Status: r.Status, ExitReason: r.ExitReason,
			WorkflowID: r.WorkflowID, RecordedAt: r.RecordedAt.UTC(), StartedAt: utcPtr(r.StartedAt), EndedAt: utcPtr(r.EndedAt),
			Delivery: r.Delivery, Error: r.Error}
	}
	return out
}

// NonNil is s, or an empty slice for nil (a JSON [] rather than null).
func NonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// utcPtr is t in UTC, nil for nil.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
