package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ErrCronJobExists reports a cron job whose ID or name is already taken.
var ErrCronJobExists = errors.New("cron job already exists")

// Overlap policies of a CronJob: what happens to a slot that comes due
// while the job's previous run is still going.
const (
	OverlapSkip  = "skip"  // record the slot "skipped" (the default)
	OverlapAllow = "allow" // start it anyway
)

// Catch-up policies of a CronJob: what happens to the slots that came due
// while no scheduler was ticking (within the job's CatchUpWindow; older ones
// are always recorded "missed").
const (
	CatchUpLast = "last" // run the most recent one, record the others missed (the default)
	CatchUpNone = "none" // run only the slot of the current minute
	CatchUpAll  = "all"  // run every one, oldest first
)

// DefaultCatchUpWindow is the CatchUpWindow of a job created without one.
const DefaultCatchUpWindow = time.Hour

// Statuses of a CronRun.
const (
	RunStarted   = "started"
	RunSkipped   = "skipped"
	RunMissed    = "missed"
	RunCompleted = "completed"
	RunFailed    = "failed"
)

// maxCronIDLen is the column size of cron job IDs and names.
const maxCronIDLen = 128

// CronJob is an agent job that runs on a schedule: each slot of Schedule
// starts one agent turn with Prompt.
type CronJob struct {
	ID       string `gorm:"primaryKey;size:128"`
	Name     string `gorm:"uniqueIndex;size:128"`
	Schedule string // parsed by the scheduler package
	TimeZone string // IANA zone of a cron expression; empty means UTC

	Prompt        string   `gorm:"type:text;serializer:text"`
	Model         string   // empty: the configured default model
	Toolsets      []string `gorm:"serializer:json;type:text"`
	MaxIterations int      // 0: the configured default
	PreRunScript  string   `gorm:"type:text;serializer:text"`
	Deliver       []string `gorm:"serializer:json;type:text"`
	// Origin is the chat that made the job ("telegram:<chat>",
	// "slack:<channel>"), where the target "origin" delivers; empty for a
	// job made by the CLI or the API.
	Origin string `gorm:"size:160"`
	// Owner is the key of the gateway chat that made the job
	// (models.Chat.Key): its runs' sessions are the chat's (Session.Owner),
	// so they recall only what the chat may. Empty for a job the operator
	// made.
	Owner string `gorm:"size:512;not null;default:'';serializer:text"`

	Enabled       bool          `gorm:"not null;default:false"`
	Overlap       string        // OverlapSkip (default) or OverlapAllow
	CatchUp       string        // CatchUpLast (default), CatchUpNone or CatchUpAll
	CatchUpWindow time.Duration // DefaultCatchUpWindow when created as zero

	CreatedAt time.Time
	UpdatedAt time.Time

	// LastScheduled is the last slot handled (started, skipped or missed):
	// the scheduler's high-water mark. Nil until the first slot.
	LastScheduled *time.Time
}

// CronRun records what became of one slot of a job. The pair (JobID,
// ScheduledAt) is unique: it is what makes a slot run at most once, however
// many schedulers tick.
type CronRun struct {
	JobID       string    `gorm:"primaryKey;size:128"`
	ScheduledAt time.Time `gorm:"primaryKey"`
	WorkflowID  string    `gorm:"size:256"`
	Status      string    `gorm:"size:32"` // RunStarted, RunSkipped, RunMissed, RunCompleted or RunFailed
	// RecordedAt is when the run was recorded (by RecordRun, now when zero).
	RecordedAt time.Time
	// StartedAt is set once the run's workflow is known to be started; a
	// "started" run without it is being started, or its start failed.
	StartedAt  *time.Time
	EndedAt    *time.Time
	ExitReason string `gorm:"serializer:text"`
	Delivery   string `gorm:"type:text;serializer:text"`
	Error      string `gorm:"type:text;serializer:text"`
}

// MigrateCron creates or updates the cron_jobs and cron_runs tables, under
// the same migration lock as the rest of the schema.
func (s *Store) MigrateCron(ctx context.Context) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.dialect.lockMigrations(tx); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		if err := tx.AutoMigrate(&CronJob{}, &CronRun{}); err != nil {
			return err
		}
		return ownLegacyCronJobs(tx)
	})
	if err != nil {
		return fmt.Errorf("models: migrate %s cron tables: %w", s.dialect.name(), err)
	}
	return nil
}

// LegacyOwnerPrefix begins the owner given to a job a chat made before
// jobs had owners: LegacyOwnerPrefix + its origin. No chat's session has
// it, so the job's runs recall only their own earlier runs, never the
// operator's or another chat's sessions.
const LegacyOwnerPrefix = "legacy:"

// ownLegacyCronJobs gives each job a chat made before jobs had owners
// (an origin, no owner) its legacy owner. Idempotent.
func ownLegacyCronJobs(tx *gorm.DB) error {
	var jobs []CronJob
	if err := tx.Select("id", "origin").Where("owner = ? AND origin <> ?", "", "").Find(&jobs).Error; err != nil {
		return fmt.Errorf("own legacy cron jobs: %w", err)
	}
	for _, j := range jobs {
		if err := tx.Exec("UPDATE cron_jobs SET owner = ? WHERE id = ? AND owner = ''", EncodeText(LegacyOwnerPrefix+j.Origin), j.ID).Error; err != nil {
			return fmt.Errorf("own legacy cron job %s: %w", j.ID, err)
		}
	}
	return nil
}

// checkCronJob validates job and fills in the defaults of its policies.
func checkCronJob(job *CronJob) error {
	if err := checkID("cron job ID", job.ID, maxCronIDLen); err != nil {
		return err
	}
	if err := checkID("cron job name", job.Name, maxCronIDLen); err != nil {
		return err
	}
	if job.Schedule == "" {
		return fmt.Errorf("%w: cron job %q has no schedule", ErrInvalidArgument, job.ID)
	}
	switch job.Overlap {
	case "":
		job.Overlap = OverlapSkip
	case OverlapSkip, OverlapAllow:
	default:
		return fmt.Errorf("%w: overlap policy %q (want %q or %q)", ErrInvalidArgument, job.Overlap, OverlapSkip, OverlapAllow)
	}
	switch job.CatchUp {
	case "":
		job.CatchUp = CatchUpLast
	case CatchUpLast, CatchUpNone, CatchUpAll:
	default:
		return fmt.Errorf("%w: catch-up policy %q (want %q, %q or %q)", ErrInvalidArgument, job.CatchUp, CatchUpLast, CatchUpNone, CatchUpAll)
	}
	switch {
	case job.CatchUpWindow == 0:
		job.CatchUpWindow = DefaultCatchUpWindow
	case job.CatchUpWindow < 0:
		return fmt.Errorf("%w: negative catch-up window %s", ErrInvalidArgument, job.CatchUpWindow)
	}
	if job.MaxIterations < 0 {
		return fmt.Errorf("%w: negative max iterations %d", ErrInvalidArgument, job.MaxIterations)
	}
	return nil
}

// CreateCronJob stores a new job and returns it as stored: empty policies
// and a zero CatchUpWindow take their defaults, CreatedAt and UpdatedAt are
// set (a CreatedAt given by the caller is kept) and LastScheduled is nil.
// A job whose ID or name is taken yields ErrCronJobExists; a job without
// ID, name or schedule, or with an unknown policy, ErrInvalidArgument.
func (s *Store) CreateCronJob(ctx context.Context, job CronJob) (*CronJob, error) {
	if err := checkCronJob(&job); err != nil {
		return nil, fmt.Errorf("models: create cron job: %w", err)
	}
	stamp := now()
	if job.CreatedAt.IsZero() {
		job.CreatedAt = stamp
	} else {
		job.CreatedAt = job.CreatedAt.UTC().Truncate(time.Microsecond)
	}
	job.UpdatedAt = stamp
	job.LastScheduled = nil
	res := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&job)
	if res.Error != nil {
		return nil, fmt.Errorf("models: create cron job %q: %w", job.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, fmt.Errorf("models: create cron job %q named %q: %w", job.ID, job.Name, ErrCronJobExists)
	}
	return &job, nil
}

// cronJobColumns are the columns UpdateCronJob writes: everything but the
// ID, CreatedAt and the scheduler's LastScheduled.
var cronJobColumns = []string{
	"name", "schedule", "time_zone", "prompt", "model", "toolsets", "max_iterations",
	"pre_run_script", "deliver", "enabled", "overlap", "catch_up", "catch_up_window", "updated_at",
}

// UpdateCronJob replaces the stored job with job.ID by job, except for its
// CreatedAt and LastScheduled, which only the store and the scheduler set.
// Defaults and errors are those of CreateCronJob; a missing job yields
// ErrNotFound.
func (s *Store) UpdateCronJob(ctx context.Context, job CronJob) error {
	if err := checkCronJob(&job); err != nil {
		return fmt.Errorf("models: update cron job: %w", err)
	}
	job.UpdatedAt = now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var taken int64
		if err := tx.Model(&CronJob{}).Where("name = ? AND id <> ?", job.Name, job.ID).Count(&taken).Error; err != nil {
			return err
		}
		if taken > 0 {
			return fmt.Errorf("name %q: %w", job.Name, ErrCronJobExists)
		}
		return changedRow(tx.Model(&CronJob{}).Where("id = ?", job.ID).Select(cronJobColumns).Updates(&job))
	})
	if err != nil {
		return fmt.Errorf("models: update cron job %q: %w", job.ID, err)
	}
	return nil
}

// SetCronJobEnabled enables or disables the job with the given ID or name;
// a missing job yields ErrNotFound.
func (s *Store) SetCronJobEnabled(ctx context.Context, idOrName string, enabled bool) error {
	job, err := s.CronJob(ctx, idOrName)
	if err != nil {
		return err
	}
	err = changedRow(s.db.WithContext(ctx).Model(&CronJob{}).Where("id = ?", job.ID).
		Updates(map[string]any{"enabled": enabled, "updated_at": now()}))
	if err != nil {
		return fmt.Errorf("models: set cron job %q enabled=%t: %w", job.ID, enabled, err)
	}
	return nil
}

// CronJob returns the job whose ID is idOrName or, failing that, the job
// named idOrName; ErrNotFound when there is neither.
func (s *Store) CronJob(ctx context.Context, idOrName string) (*CronJob, error) {
	var job CronJob
	err := s.db.WithContext(ctx).Where("id = ?", idOrName).Take(&job).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		err = s.db.WithContext(ctx).Where("name = ?", idOrName).Take(&job).Error
	}
	if err != nil {
		return nil, fmt.Errorf("models: cron job %q: %w", idOrName, notFound(err))
	}
	return &job, nil
}

// CronJobs returns every job, ordered by name.
func (s *Store) CronJobs(ctx context.Context) ([]CronJob, error) {
	jobs := []CronJob{}
	if err := s.db.WithContext(ctx).Order("name").Order("id").Find(&jobs).Error; err != nil {
		return nil, fmt.Errorf("models: cron jobs: %w", err)
	}
	return jobs, nil
}

// EnabledCronJobs returns the enabled jobs, ordered by ID.
func (s *Store) EnabledCronJobs(ctx context.Context) ([]CronJob, error) {
	jobs := []CronJob{}
	if err := s.db.WithContext(ctx).Where("enabled = ?", true).Order("id").Find(&jobs).Error; err != nil {
		return nil, fmt.Errorf("models: enabled cron jobs: %w", err)
	}
	return jobs, nil
}

// DeleteCronJob deletes the job with the given ID or name and its runs;
// a missing job yields ErrNotFound.
func (s *Store) DeleteCronJob(ctx context.Context, idOrName string) error {
	job, err := s.CronJob(ctx, idOrName)
	if err != nil {
		return err
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("job_id = ?", job.ID).Delete(&CronRun{}).Error; err != nil {
			return fmt.Errorf("runs: %w", err)
		}
		return changedRow(tx.Where("id = ?", job.ID).Delete(&CronJob{}))
	})
	if err != nil {
		return fmt.Errorf("models: delete cron job %q: %w", job.ID, err)
	}
	return nil
}

// checkCronRun validates run and normalises its times to UTC microseconds.
func checkCronRun(run *CronRun) error {
	if err := checkID("cron job ID", run.JobID, maxCronIDLen); err != nil {
		return err
	}
	if run.ScheduledAt.IsZero() {
		return fmt.Errorf("%w: run of cron job %q without a slot", ErrInvalidArgument, run.JobID)
	}
	switch run.Status {
	case RunStarted, RunSkipped, RunMissed, RunCompleted, RunFailed:
	default:
		return fmt.Errorf("%w: run status %q", ErrInvalidArgument, run.Status)
	}
	run.ScheduledAt = run.ScheduledAt.UTC().Truncate(time.Microsecond)
	run.RecordedAt = run.RecordedAt.UTC().Truncate(time.Microsecond)
	run.StartedAt = utcMicros(run.StartedAt)
	run.EndedAt = utcMicros(run.EndedAt)
	return nil
}

func utcMicros(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC().Truncate(time.Microsecond)
	return &u
}

// RecordRun inserts run if its job has no run for the same slot yet, and
// reports whether this call created it; false means another scheduler (or
// an earlier attempt of the same tick) already recorded the slot, and the
// stored run is left as it is.
func (s *Store) RecordRun(ctx context.Context, run CronRun) (created bool, err error) {
	if err := checkCronRun(&run); err != nil {
		return false, fmt.Errorf("models: record cron run: %w", err)
	}
	if run.RecordedAt.IsZero() {
		run.RecordedAt = now()
	}
	res := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&run)
	if res.Error != nil {
		return false, fmt.Errorf("models: record run of cron job %q at %s: %w",
			run.JobID, run.ScheduledAt.Format(time.RFC3339), res.Error)
	}
	return res.RowsAffected == 1, nil
}

// UpdateRun replaces the stored run of the same job and slot by run; a
// missing run yields ErrNotFound.
func (s *Store) UpdateRun(ctx context.Context, run CronRun) error {
	if err := checkCronRun(&run); err != nil {
		return fmt.Errorf("models: update cron run: %w", err)
	}
	err := changedRow(s.db.WithContext(ctx).Model(&CronRun{}).
		Where("job_id = ? AND scheduled_at = ?", run.JobID, run.ScheduledAt).
		Select("workflow_id", "status", "started_at", "ended_at", "exit_reason", "delivery", "error").
		Updates(&run))
	if err != nil {
		return fmt.Errorf("models: update run of cron job %q at %s: %w",
			run.JobID, run.ScheduledAt.Format(time.RFC3339), err)
	}
	return nil
}

// MarkRunStarted sets the StartedAt of a job's run for one slot, unless it
// is set already; a missing run yields ErrNotFound.
func (s *Store) MarkRunStarted(ctx context.Context, jobID string, slot, at time.Time) error {
	slot = slot.UTC().Truncate(time.Microsecond)
	at = at.UTC().Truncate(time.Microsecond)
	db := s.db.WithContext(ctx)
	res := db.Model(&CronRun{}).Where("job_id = ? AND scheduled_at = ? AND started_at IS NULL", jobID, slot).
		Update("started_at", at)
	if err := updatedOrThere(res, db.Model(&CronRun{}).Where("job_id = ? AND scheduled_at = ?", jobID, slot)); err != nil {
		return fmt.Errorf("models: mark run of cron job %q at %s started: %w", jobID, slot.Format(time.RFC3339), err)
	}
	return nil
}

// CronRun returns the run of a job for one slot, or ErrNotFound.
func (s *Store) CronRun(ctx context.Context, jobID string, slot time.Time) (*CronRun, error) {
	slot = slot.UTC().Truncate(time.Microsecond)
	var run CronRun
	err := s.db.WithContext(ctx).Where("job_id = ? AND scheduled_at = ?", jobID, slot).Take(&run).Error
	if err != nil {
		return nil, fmt.Errorf("models: run of cron job %q at %s: %w", jobID, slot.Format(time.RFC3339), notFound(err))
	}
	return &run, nil
}

// CronRuns returns a job's runs, the latest slot first, at most limit of
// them (all when limit is not positive).
func (s *Store) CronRuns(ctx context.Context, jobID string, limit int) ([]CronRun, error) {
	runs := []CronRun{}
	q := s.db.WithContext(ctx).Where("job_id = ?", jobID).Order("scheduled_at DESC")
	if limit > 0 {
		q = q.Limit(limit)
	}
	if err := q.Find(&runs).Error; err != nil {
		return nil, fmt.Errorf("models: runs of cron job %q: %w", jobID, err)
	}
	return runs, nil
}

// AdvanceJob moves the job's LastScheduled up to slot; it never moves it
// back, so schedulers racing on the same job cannot undo each other's
// progress. A missing job yields ErrNotFound.
func (s *Store) AdvanceJob(ctx context.Context, jobID string, slot time.Time) error {
	slot = slot.UTC().Truncate(time.Microsecond)
	db := s.db.WithContext(ctx)
	res := db.Model(&CronJob{}).
		Where("id = ? AND (last_scheduled IS NULL OR last_scheduled < ?)", jobID, slot).
		Update("last_scheduled", slot)
	if err := updatedOrThere(res, db.Model(&CronJob{}).Where("id = ?", jobID)); err != nil {
		return fmt.Errorf("models: advance cron job %q to %s: %w", jobID, slot.Format(time.RFC3339), err)
	}
	return nil
}

// updatedOrThere is the error of a conditional update (res): nil when it
// changed a row or when the row it is about is there (row, a query for
// it) and only the condition did not hold (one statement in the common
// case), ErrNotFound when it is not there.
func updatedOrThere(res, row *gorm.DB) error {
	if res.Error != nil || res.RowsAffected > 0 {
		return res.Error
	}
	var n int64
	if err := row.Count(&n).Error; err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}
