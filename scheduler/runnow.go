package scheduler

import "time"

// RunNowSlot is the slot a run started by hand ("cron run-now") at now is
// recorded under: now to the second, moved off second 0 so that it never
// takes the place of a scheduled slot (schedules have minutes at the
// finest). Each run-now gets a slot of its own, so its run record, its
// workflow id (WorkflowID) and its session are its own too; a slot found
// taken (a second request within the same second) moves on with
// NextRunNowSlot. Pure.
func RunNowSlot(now time.Time) time.Time {
	s := now.UTC().Truncate(time.Second)
	if s.Second() == 0 {
		s = s.Add(time.Second)
	}
	return s
}

// NextRunNowSlot is the run-now slot after a taken one. Pure.
func NextRunNowSlot(taken time.Time) time.Time { return RunNowSlot(taken.Add(time.Second)) }

// IsRunNowSlot reports whether slot is one RunNowSlot makes (a scheduled
// slot is on a whole minute). Pure.
func IsRunNowSlot(slot time.Time) bool { return !slot.Equal(slot.Truncate(time.Minute)) }
