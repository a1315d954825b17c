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
	started, scheduled := enumspb.PENDING_ACTIVITY_STATE_STARTED, enumspb.PENDING_ACTIVITY_STATE_SCHEDULED
	pending := func(id string, st enumspb.PendingActivityState, who string) *workflowpb.PendingActivityInfo {
		return &workflowpb.PendingActivityInfo{ActivityId: id, State: st, LastWorkerIdentity: who}
	}
	for _, tc := range []struct {
		name    string
		pending []*workflowpb.PendingActivityInfo
		want    []string
	}{
		{"none", nil, nil},
		{"a dead owner's started attempt", []*workflowpb.PendingActivityInfo{pending("1", started, ownerPrefix+"12@host 00aa")}, []string{"1"}},
		{"this owner's own attempt", []*workflowpb.PendingActivityInfo{pending("1", started, self)}, nil},
		{"a separate worker's attempt", []*workflowpb.PendingActivityInfo{pending("1", started, "77@host@")}, nil},
		{"waiting for its next attempt", []*workflowpb.PendingActivityInfo{pending("1", scheduled, ownerPrefix+"12@host 00aa")}, nil},
		{"the same pid, another start", []*workflowpb.PendingActivityInfo{pending("1", started, strings.Split(self, " ")[0]+" "+strings.Split(self, " ")[1]+" ffffffffffff")}, []string{"1"}},
		{"mixed", []*workflowpb.PendingActivityInfo{
			pending("1", started, self), pending("2", started, ownerPrefix+"9@h 01"), pending("3", started, "w"), pending("4", started, ownerPrefix+"8@h 02"),
		}, []string{"2", "4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := deadAttempts(tc.pending, self); !slices.Equal(got, tc.want) {
				t.Fatalf("deadAttempts = %v, want %v", got, tc.want)
			}
		})
	}
}
