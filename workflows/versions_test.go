package workflows

import (
	"maps"
	"slices"
	"testing"
)

// TestEpochOneIsFixed pins the changes version 1 of changeEpoch stands
// for. Runs that recorded it take each of these changes without a marker,
// so adding a change here later would make them take the change's new path
// where their history has the old one: a later change gets its own marker
// (or a version 2 of the epoch, with its own set).
func TestEpochOneIsFixed(t *testing.T) {
	t.Parallel()
	want := []string{"answer-calls", "carried-probe", "follow-ends", "goal-steers", "goal-via-session",
		"human-events", "idle-queue", "invalid-args-feedback", "local-activities", "reply-heartbeat",
		"resume-policy", "session-handoff", "steer-undelivered", "turn-end-signal", "turn-visibility",
		"unknown-choice-denies"}
	if got := slices.Sorted(maps.Keys(epoch1)); !slices.Equal(got, want) {
		t.Fatalf("epoch 1 stands for %v, want %v", got, want)
	}
}

// TestEpochTwoIsFixed pins the changes version 2 of changeEpoch adds, for
// the same reason; and no change is in two epochs.
func TestEpochTwoIsFixed(t *testing.T) {
	t.Parallel()
	want := []string{"memory-sync", "turn-end-asked"}
	if got := slices.Sorted(maps.Keys(epoch2)); !slices.Equal(got, want) {
		t.Fatalf("epoch 2 adds %v, want %v", got, want)
	}
	for change := range epoch2 {
		if epoch1[change] {
			t.Errorf("%s is in epochs 1 and 2", change)
		}
	}
}
