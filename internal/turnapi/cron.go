package turnapi

import "time"

// SilentMarker as a job's final answer suppresses delivery.
const SilentMarker = "[SILENT]"

// DeliverInput sends one job result to one target.
type DeliverInput struct {
	Target  string // "local" or "webhook:<url>"
	JobID   string
	JobName string
	Slot    time.Time
	Text    string
	Status  string
	// MessageID, when set, names the stored answer to deliver in full
	// (Text is then only its preview): history never carries a long answer.
	MessageID int64 `json:",omitempty"`
}

// FinishCronRunInput records a scheduled run's outcome.
type FinishCronRunInput struct {
	Run CronRunRecord
}

// CronRunStatus is how a scheduled run ended.
type CronRunStatus string

// Statuses a run's workflow reports (the store has the same words for them,
// among others it sets itself).
const (
	CronRunCompleted CronRunStatus = "completed"
	CronRunFailed    CronRunStatus = "failed"
)

// CronRunRecord is what a CronRunWorkflow reports about its slot; the
// FinishCronRun activity records it in the store. Its fields and their JSON
// names are those of the store's run record, so inputs scheduled by earlier
// versions decode into it unchanged.
type CronRunRecord struct {
	JobID       string
	ScheduledAt time.Time
	WorkflowID  string
	Status      CronRunStatus
	StartedAt   *time.Time
	EndedAt     *time.Time
	ExitReason  string
	Delivery    string
	Error       string
}
