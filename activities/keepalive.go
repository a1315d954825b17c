package activities

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// KeepAlive heartbeats an activity's attempt every interval (with
// details(), when set) while it works, and returns the context the work
// runs in and a stop that ends the heartbeats (and waits for the last).
// The work's context stays usable after stop, to store what the work got.
//
// The work ends when the attempt must: when Temporal asks it to stop (the
// turn was stopped), says the attempt is no longer the one it waits for (it
// timed out and another began: a zombie stops at once), pauses or resets
// it, or its deadline passes. It does not end when a heartbeat merely went
// unanswered for a moment: the SDK cancels an activity's context when one
// heartbeat call fails with a transient error (a loaded server answering
// after the call's one-second bound), although the server still waits for
// the attempt. The work then goes on, and its heartbeats are sent through
// the client, whose answers say exactly what stands; when none is answered
// for the heartbeat timeout the attempt has surely been given up, and the
// work ends.
func KeepAlive(ctx context.Context, every time.Duration, details func() any, log *slog.Logger) (context.Context, func()) {
	if log == nil {
		log = slog.Default()
	}
	work, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		sdkDone := ctx.Done()
		var own *ownBeats
		var deadline <-chan time.Time // the attempt's deadline, once the SDK's context is gone
		for {
			select {
			case <-done:
				return
			case <-deadline:
				cancel(context.DeadlineExceeded)
				return
			case <-sdkDone:
				cause := context.Cause(ctx)
				if !unansweredBeat(ctx.Err(), cause) || !activity.IsActivity(ctx) {
					cancel(cause)
					return
				}
				own = newOwnBeats(ctx)
				if own == nil {
					cancel(cause)
					return
				}
				sdkDone = nil
				if dl, ok := ctx.Deadline(); ok {
					deadline = time.After(time.Until(dl))
				}
				log.Info("a heartbeat went unanswered for a moment; the attempt goes on and checks its heartbeats itself",
					"activity", activity.GetInfo(ctx).ActivityType.Name, "attempt", activity.GetInfo(ctx).Attempt, "error", cause)
			case <-t.C:
				var d []any
				if details != nil {
					d = []any{details()}
				}
				if own == nil {
					activity.RecordHeartbeat(ctx, d...)
					continue
				}
				if err := own.beat(work, d); err != nil {
					cancel(err)
					return
				}
			}
		}
	}()
	return work, func() {
		close(done)
		<-finished
	}
}

// unansweredBeat reports whether an activity's context ended (err, with
// cause) only because one heartbeat call failed in transit: not a request
// to stop, nor an attempt the server no longer has, nor a pause or reset,
// a deadline or the worker's shutdown (whose cause is a bare
// context.Canceled). Pure.
func unansweredBeat(err, cause error) bool {
	if !errors.Is(err, context.Canceled) || cause == nil || cause == context.Canceled {
		return false
	}
	var canceled *temporal.CanceledError
	var notFound *serviceerror.NotFound
	var nsInactive *serviceerror.NamespaceNotActive
	var nsMissing *serviceerror.NamespaceNotFound
	switch {
	case errors.As(cause, &canceled), errors.As(cause, &notFound), errors.As(cause, &nsInactive), errors.As(cause, &nsMissing),
		errors.Is(cause, activity.ErrActivityPaused), errors.Is(cause, activity.ErrActivityReset):
		return false
	}
	return true
}

// ownBeats sends an attempt's heartbeats through the client once the SDK
// stopped sending them.
type ownBeats struct {
	record  func(ctx context.Context, details ...any) error
	timeout time.Duration // the attempt's heartbeat timeout
	lastOK  time.Time
}

// newOwnBeats is the client's heartbeat for the activity of ctx; nil
// when there is no client or no heartbeat timeout to keep to.
func newOwnBeats(ctx context.Context) *ownBeats {
	info := activity.GetInfo(ctx)
	c := activity.GetClient(ctx)
	if c == nil || info.HeartbeatTimeout <= 0 || len(info.TaskToken) == 0 {
		return nil
	}
	token := info.TaskToken
	return &ownBeats{
		record: func(ctx context.Context, details ...any) error {
			return c.RecordActivityHeartbeat(ctx, token, details...)
		},
		timeout: info.HeartbeatTimeout, lastOK: time.Now(),
	}
}

// beat sends one heartbeat and says whether the work must end: nil while
// the attempt stands, else why it ends.
func (o *ownBeats) beat(ctx context.Context, details []any) error {
	rpc, cancel := context.WithTimeout(ctx, o.timeout/2)
	defer cancel()
	err := o.record(rpc, details...)
	if err == nil {
		o.lastOK = time.Now()
		return nil
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if !unansweredBeat(context.Canceled, err) {
		return err
	}
	// wallclock: how long since the server last answered decides, as the
	// server's own heartbeat timeout does.
	if time.Since(o.lastOK) >= o.timeout {
		return err
	}
	return nil
}
