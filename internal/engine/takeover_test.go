package engine

import (
	"slices"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
)

func TestDeadAttempts(t *testing.T) {
	t.Parallel()
	self := ownerIdentity()
	f := strings.Fields(self) // "talaria-owner", "PID@HOST", "NONCE"
	started, scheduled := enumspb.PENDING_ACTIVITY_STATE_STARTED, enumspb.PENDING_ACTIVITY_STATE_SCHEDULED
	stopping := enumspb.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED
	dead := ownerPrefix + "12@host 00aa"
	pending := func(id string, st enumspb.PendingActivityState, who string) *workflowpb.PendingActivityInfo {
		return &workflowpb.PendingActivityInfo{ActivityId: id, State: st, LastWorkerIdentity: who}
	}
	for _, tc := range []struct {
		name          string
		pending       []*workflowpb.PendingActivityInfo
		retry, cancel []string
	}{
		{"none", nil, nil, nil},
		{"a dead owner's started attempt", []*workflowpb.PendingActivityInfo{pending("1", started, dead)}, []string{"1"}, nil},
		{"a dead owner's attempt asked to stop", []*workflowpb.PendingActivityInfo{pending("1", stopping, dead)}, nil, []string{"1"}},
		{"this owner's own attempt", []*workflowpb.PendingActivityInfo{pending("1", started, self), pending("2", stopping, self)}, nil, nil},
		{"a separate worker's attempt", []*workflowpb.PendingActivityInfo{pending("1", started, "77@host@")}, nil, nil},
		{"waiting for its next attempt", []*workflowpb.PendingActivityInfo{pending("1", scheduled, dead)}, nil, nil},
		{"the same pid, another start", []*workflowpb.PendingActivityInfo{pending("1", started, f[0]+" "+f[1]+" ffffffffffff")}, []string{"1"}, nil},
		{"mixed", []*workflowpb.PendingActivityInfo{
			pending("1", started, self), pending("2", started, ownerPrefix+"9@h 01"), pending("3", started, "w"),
			pending("4", started, ownerPrefix+"8@h 02"), pending("5", stopping, ownerPrefix+"8@h 02"),
		}, []string{"2", "4"}, []string{"5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			retry, cancel := deadAttempts(tc.pending, self)
			if !slices.Equal(retry, tc.retry) || !slices.Equal(cancel, tc.cancel) {
				t.Fatalf("deadAttempts = %v, %v; want %v, %v", retry, cancel, tc.retry, tc.cancel)
			}
		})
	}
}

// TestClaimOwnership: a start after a clean stop (no owner file) has
// nothing to take over; one after a crash (the file left) has.
func TestClaimOwnership(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if crashed, err := claimOwnership(dir); err != nil || crashed {
		t.Fatalf("first start: crashed %v, %v", crashed, err)
	}
	if crashed, err := claimOwnership(dir); err != nil || !crashed {
		t.Fatalf("start after a crash: crashed %v, %v", crashed, err)
	}
	releaseOwnership(dir)
	if crashed, err := claimOwnership(dir); err != nil || crashed {
		t.Fatalf("start after a clean stop: crashed %v, %v", crashed, err)
	}
}
