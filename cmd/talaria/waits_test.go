package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/models"
)

func TestDescribeWaits(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pending := []*workflowpb.PendingActivityInfo{
		{ // between two attempts of a rate-limited call
			ActivityType: &commonpb.ActivityType{Name: "CallModel"}, State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED,
			Attempt: 2, MaximumAttempts: 6, NextAttemptScheduleTime: timestamppb.New(now.Add(4 * time.Minute)),
			LastFailure: &failurepb.Failure{Message: "model call failed (rate_limit, HTTP 429):\nslow down"},
		},
		{ // a first attempt that has just started: nothing to show
			ActivityType: &commonpb.ActivityType{Name: "CallModel"}, State: enumspb.PENDING_ACTIVITY_STATE_STARTED,
			Attempt: 1, LastStartedTime: timestamppb.New(now.Add(-2 * time.Second)),
		},
		{ // a slow first attempt
			ActivityType: &commonpb.ActivityType{Name: "CallModel"}, State: enumspb.PENDING_ACTIVITY_STATE_STARTED,
			Attempt: 1, MaximumAttempts: 6, LastStartedTime: timestamppb.New(now.Add(-time.Minute)),
		},
		{ // a tool batch's first attempt is the tool running now, not a wait
			ActivityType: &commonpb.ActivityType{Name: "ExecuteTools"}, State: enumspb.PENDING_ACTIVITY_STATE_STARTED,
			Attempt: 1, MaximumAttempts: 3, LastStartedTime: timestamppb.New(now.Add(-time.Hour)),
		},
		{ // its second attempt, after a failure, is
			ActivityType: &commonpb.ActivityType{Name: "ExecuteTools"}, State: enumspb.PENDING_ACTIVITY_STATE_STARTED,
			Attempt: 2, MaximumAttempts: 3, LastStartedTime: timestamppb.New(now.Add(-3 * time.Second)),
			LastFailure: &failurepb.Failure{Message: "worker \x1b[2Jlost"},
		},
		{ // scheduled for the first time, no retry wait
			ActivityType: &commonpb.ActivityType{Name: "CallModel"}, State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, Attempt: 1,
		},
		{ // after a body that is not the protocol: its class allows 3 attempts, not the policy's 6
			ActivityType: &commonpb.ActivityType{Name: "CallModel"}, State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED,
			Attempt: 2, MaximumAttempts: 6, NextAttemptScheduleTime: timestamppb.New(now.Add(2 * time.Second)),
			LastFailure: &failurepb.Failure{Message: "model call failed (invalid_response): <html>",
				FailureInfo: &failurepb.Failure_ApplicationFailureInfo{ApplicationFailureInfo: &failurepb.ApplicationFailureInfo{Type: "invalid_response"}}},
		},
	}
	waits := describeWaits(pending, now)
	if len(waits) != 4 {
		t.Fatalf("waits %+v", waits)
	}
	var out bytes.Buffer
	printWaits(&out, waits, now)
	want := "  waiting: model call attempt 2 of 6 in 4m0s — last failure: model call failed (rate_limit, HTTP 429): slow down\n" +
		"  waiting: model call attempt 1 of 6 running for 1m0s\n" +
		"  waiting: tool batch attempt 2 of 3 running for 3s — last failure: worker \\x1b[2Jlost\n" +
		"  waiting: model call attempt 2 of 3 in 2s — last failure: model call failed (invalid_response): <html>\n"
	if out.String() != want {
		t.Fatalf("printed\n%s\nwant\n%s", out.String(), want)
	}
	if long := clipLine(strings.Repeat("é", 400), 301); len(long) > 301+len("…") || !strings.HasSuffix(long, "…") {
		t.Fatalf("clipLine %q", long)
	}
}

// TestWaitEventIsAProgressLine: a wait event ends the streamed line and is
// shown on stderr, like a status.
func TestWaitEventIsAProgressLine(t *testing.T) {
	var out, errOut bytes.Buffer
	p := &streamPrinter{out: &out, errOut: &errOut}
	p.onEvent(models.Event{Kind: events.KindDelta, Data: "partial answ"})
	p.onEvent(models.Event{Kind: events.KindWait, Data: "model call failed (truncated_reply): cut off; next attempt (2 of 6) in 1s"})
	if out.String() != "partial answ\n" || errOut.String() != "  ⋯ model call failed (truncated_reply): cut off; next attempt (2 of 6) in 1s\n" {
		t.Fatalf("out %q err %q", out.String(), errOut.String())
	}
}
