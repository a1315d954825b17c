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

// TestEndsAttempt: a heartbeat's answer ends the attempt when the server
// says so; a heartbeat not answered (a server slow or away for a moment)
// does not.
func TestEndsAttempt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"the turn asked the attempt to stop", temporal.NewCanceledError(), true},
		{"a wrapped stop", fmt.Errorf("heartbeat: %w", temporal.NewCanceledError()), true},
		{"the server no longer has the attempt", serviceerror.NewNotFound("invalid activityID or activity already timed out"), true},
		{"a namespace gone", serviceerror.NewNamespaceNotFound("default"), true},
		{"a namespace not active here", serviceerror.NewNamespaceNotActive("default", "a", "b"), true},
		{"paused", activity.ErrActivityPaused, true},
		{"reset", activity.ErrActivityReset, true},
		{"a heartbeat call past its bound", context.DeadlineExceeded, false},
		{"a server too busy to answer", serviceerror.NewResourceExhausted(0, "busy"), false},
		{"a server unavailable for a moment", serviceerror.NewUnavailable("restarting"), false},
		{"a connection reset", errors.New("connection reset by peer"), false},
	} {
		if got := endsAttempt(tt.err); got != tt.want {
			t.Errorf("%s: endsAttempt(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

// TestClientBeats: a stop, a vanished attempt or a pause end the work at
// once; a heartbeat that goes unanswered does not, until none was answered
// for the heartbeat timeout; an answered one renews the attempt's time.
func TestClientBeats(t *testing.T) {
	t.Parallel()
	transient := serviceerror.NewUnavailable("busy")
	for _, tt := range []struct {
		name    string
		answer  error
		hang    bool          // the call is answered only when its bound ends
		since   time.Duration // since the last answered heartbeat was sent
		calls   int
		wantEnd bool
	}{
		{"answered", nil, false, time.Second, 1, false},
		{"unanswered once", transient, false, time.Second, 1, false},
		{"unanswered as the timeout ends", transient, true, 10*time.Second - 20*time.Millisecond, 1, true},
		{"silent for the timeout", nil, false, 10 * time.Second, 0, true},
		{"stop", temporal.NewCanceledError(), false, 0, 1, true},
		{"the attempt timed out", serviceerror.NewNotFound("activity already timed out"), false, 0, 1, true},
		{"paused", activity.ErrActivityPaused, false, 0, 1, true},
	} {
		calls := 0
		last := time.Now().Add(-tt.since)
		o := &clientBeats{timeout: 10 * time.Second, lastOK: last,
			record: func(ctx context.Context, _ ...any) error {
				calls++
				if tt.hang {
					<-ctx.Done()
				}
				return tt.answer
			}}
		err := o.beat(context.Background(), []any{3})
		if (err != nil) != tt.wantEnd || calls != tt.calls {
			t.Errorf("%s: beat = %v after %d calls, want the work ended: %v after %d", tt.name, err, calls, tt.wantEnd, tt.calls)
		}
		if tt.wantEnd && !endsAttempt(tt.answer) && !errors.Is(err, errSilent) {
			t.Errorf("%s: ended for %v, want errSilent", tt.name, err)
		}
		if tt.answer == nil && tt.calls == 1 && !o.lastOK.After(last) {
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
