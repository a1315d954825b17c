package activities

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// TestUnansweredBeat: an activity's context that ended only because one
// heartbeat call failed in transit is told apart from every reason the
// attempt must end.
func TestUnansweredBeat(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		err, cause error
		want       bool
	}{
		{"a heartbeat call past its bound", context.Canceled, context.DeadlineExceeded, true},
		{"a server too busy to answer", context.Canceled, serviceerror.NewResourceExhausted(0, "busy"), true},
		{"a server unavailable for a moment", context.Canceled, serviceerror.NewUnavailable("restarting"), true},
		{"an unknown transport failure", context.Canceled, errors.New("connection reset"), true},
		{"the turn asked the attempt to stop", context.Canceled, temporal.NewCanceledError(), false},
		{"the server no longer has the attempt", context.Canceled, serviceerror.NewNotFound("invalid activityID or activity already timed out"), false},
		{"a namespace gone", context.Canceled, serviceerror.NewNamespaceNotFound("default"), false},
		{"paused", context.Canceled, activity.ErrActivityPaused, false},
		{"reset", context.Canceled, activity.ErrActivityReset, false},
		{"the worker shutting down", context.Canceled, context.Canceled, false},
		{"the attempt's deadline", context.DeadlineExceeded, context.DeadlineExceeded, false},
		{"a context not ended", nil, nil, false},
		{"a wrapped stop", context.Canceled, fmt.Errorf("heartbeat: %w", temporal.NewCanceledError()), false},
	} {
		if got := unansweredBeat(tt.err, tt.cause); got != tt.want {
			t.Errorf("%s: unansweredBeat(%v, %v) = %v, want %v", tt.name, tt.err, tt.cause, got, tt.want)
		}
	}
}

// TestOwnBeats: once the attempt checks its heartbeats itself, a stop, a
// vanished attempt or a pause end the work at once; a heartbeat that goes
// unanswered does not, until none was answered for the heartbeat timeout.
func TestOwnBeats(t *testing.T) {
	t.Parallel()
	transient := serviceerror.NewUnavailable("busy")
	for _, tt := range []struct {
		name    string
		answer  error
		since   time.Duration // since the last answered heartbeat
		wantEnd bool
	}{
		{"answered", nil, time.Hour, false},
		{"unanswered once", transient, time.Second, false},
		{"unanswered for the timeout", transient, 10 * time.Second, true},
		{"stop", temporal.NewCanceledError(), 0, true},
		{"the attempt timed out", serviceerror.NewNotFound("activity already timed out"), 0, true},
		{"paused", activity.ErrActivityPaused, 0, true},
	} {
		calls := 0
		last := time.Now().Add(-tt.since)
		o := &ownBeats{timeout: 10 * time.Second, lastOK: last,
			record: func(context.Context, ...any) error { calls++; return tt.answer }}
		err := o.beat(context.Background(), []any{3})
		if (err != nil) != tt.wantEnd || calls != 1 {
			t.Errorf("%s: beat = %v after %d calls, want the work ended: %v", tt.name, err, calls, tt.wantEnd)
		}
		if tt.answer == nil && !o.lastOK.After(last) {
			t.Errorf("%s: an answered heartbeat did not renew the attempt's time", tt.name)
		}
	}
}

// TestKeepAliveOutsideAnActivity: outside an activity the work's context
// ends with its parent's, for the parent's reason.
func TestKeepAliveOutsideAnActivity(t *testing.T) {
	t.Parallel()
	parent, cancel := context.WithCancelCause(context.Background())
	work, stop := KeepAlive(parent, time.Hour, nil, nil)
	defer stop()
	stopped := errors.New("stopped")
	cancel(stopped)
	<-work.Done()
	if !errors.Is(context.Cause(work), stopped) {
		t.Fatalf("work ended for %v, want %v", context.Cause(work), stopped)
	}
}
