package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// KeepAlive heartbeats an activity's attempt every interval (with
// details(), when set) while it works, and returns the context the work
// runs in and a stop that ends the heartbeats (call it once the attempt's
// work is done, its results stored; it may be called again). The work's
// context is the activity's (its deadline, the worker's shutdown), ended
// besides when the server's answer to a heartbeat says the attempt must
// end: the turn asked it to stop, the attempt is no longer the one the
// server waits for (it timed out and another began: a zombie stops at
// once), or it was paused or reset. The SDK then learns the answer too, so the attempt is reported
// as the server sees it.
//
// The heartbeats go through the worker's client rather than the SDK's
// activity heartbeat: the SDK cancels an activity's context when a single
// heartbeat call fails in transit (on a loaded machine, one answered after
// its one-second bound), although the server still waits for the attempt,
// and an answer the model had already given was lost with it. A heartbeat
// that is not answered ends nothing by itself; the work ends only when no
// heartbeat was answered for the attempt's heartbeat timeout, when the
// server has given the attempt up. Outside a worker (no client, as in
// tests) it is the SDK's heartbeat.
func KeepAlive(ctx context.Context, every time.Duration, details func() any, log *slog.Logger) (context.Context, func()) {
	log = cmp.Or(log, slog.Default())
	work, cancel := context.WithCancelCause(ctx)
	beats := newClientBeats(ctx)
	if beats != nil {
		every = min(every, beats.timeout/3)
	}
	// A heartbeat in flight at stop is let finish: a call abandoned midway
	// leaves the server an update it logs as failed.
	beatCtx := context.WithoutCancel(ctx)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		asked := false // the turn asked the attempt to stop
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			var d []any
			if details != nil {
				d = []any{details()}
			}
			if beats == nil {
				activity.RecordHeartbeat(ctx, d...)
				continue
			}
			err := beats.beat(beatCtx, d)
			if err == nil || asked && isStopRequest(err) {
				continue
			}
			cancel(err)
			log.Info("the attempt ends: the server's answer to its heartbeat says so",
				"activity", activity.GetInfo(ctx).ActivityType.Name, "attempt", activity.GetInfo(ctx).Attempt, "reason", err)
			// The SDK's own heartbeat gets the same answer and ends the
			// activity's context for that reason: a stop is then reported
			// as a cancellation.
			activity.RecordHeartbeat(ctx, d...)
			if !isStopRequest(err) {
				return
			}
			// A stopped attempt is still the one the server waits for:
			// its heartbeats go on while it winds down (stores what it
			// did), until stop.
			asked = true
		}
	}()
	var once sync.Once
	return work, func() {
		once.Do(func() { close(done) })
		<-finished
	}
}

// clientBeats sends an attempt's heartbeats through the worker's client
// and keeps the time of the last one the server answered.
type clientBeats struct {
	record  func(ctx context.Context, details ...any) error
	timeout time.Duration // the attempt's heartbeat timeout
	lastOK  time.Time     // when the last answered heartbeat was sent
}

// newClientBeats is the client's heartbeat for the activity of ctx; nil
// outside a worker's activity or without a heartbeat timeout.
func newClientBeats(ctx context.Context) *clientBeats {
	if !activity.IsActivity(ctx) {
		return nil
	}
	info := activity.GetInfo(ctx)
	c := activity.GetClient(ctx)
	if c == nil || info.HeartbeatTimeout <= 0 || len(info.TaskToken) == 0 {
		return nil
	}
	token := info.TaskToken
	// The server counts the heartbeat timeout from the attempt's start
	// until its first heartbeat (a start time that is not in the last
	// heartbeat timeout is another clock's: then from now).
	since := time.Now()
	if age := time.Since(info.StartedTime); age >= 0 && age < info.HeartbeatTimeout {
		since = info.StartedTime
	}
	return &clientBeats{
		record: func(ctx context.Context, details ...any) error {
			return c.RecordActivityHeartbeat(ctx, token, details...)
		},
		timeout: info.HeartbeatTimeout, lastOK: since,
	}
}

// errSilent ends an attempt whose heartbeats went unanswered for its
// heartbeat timeout: the server has given it up.
var errSilent = errors.New("no heartbeat was answered within the heartbeat timeout")

// beat sends one heartbeat; it returns why the attempt ends, or nil while
// it stands.
func (o *clientBeats) beat(ctx context.Context, details []any) error {
	// The server times the attempt out a heartbeat timeout after the last
	// heartbeat it recorded, which is no earlier than when that one was
	// sent: the work ends no later than the server gives it up.
	left := time.Until(o.lastOK.Add(o.timeout))
	if left <= 0 {
		return errSilent
	}
	sent := time.Now()
	rpc, cancel := context.WithTimeout(ctx, min(o.timeout/2, left))
	defer cancel()
	err := o.record(rpc, details...)
	switch {
	case err == nil:
		o.lastOK = sent
		return nil
	case endsAttempt(err):
		return err
	case time.Until(o.lastOK.Add(o.timeout)) <= 0:
		return fmt.Errorf("%w: %w", errSilent, err)
	}
	return nil
}

// isStopRequest reports whether a heartbeat's answer is the turn's request
// to stop the attempt. Pure.
func isStopRequest(err error) bool {
	var canceled *temporal.CanceledError
	return errors.As(err, &canceled)
}

// endsAttempt reports whether a heartbeat's answer ends the attempt: a
// request to stop, an attempt the server no longer has (or a namespace
// gone), a pause or a reset. Anything else (a server slow or unreachable
// for a moment) is a heartbeat not answered. Pure.
func endsAttempt(err error) bool {
	var canceled *temporal.CanceledError
	var notFound *serviceerror.NotFound
	var nsInactive *serviceerror.NamespaceNotActive
	var nsMissing *serviceerror.NamespaceNotFound
	return errors.As(err, &canceled) || errors.As(err, &notFound) || errors.As(err, &nsInactive) || errors.As(err, &nsMissing) ||
		errors.Is(err, activity.ErrActivityPaused) || errors.Is(err, activity.ErrActivityReset)
}
