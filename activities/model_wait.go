package activities

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/events"
	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/textline"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

// Bounds of the waits of a model call.
const (
	// DefaultModelIdleTimeout ends a model call that makes no progress
	// (no answer, no chunk of a stream) for this long.
	DefaultModelIdleTimeout = 5 * time.Minute
	// DefaultMaxRetryAfter caps the wait a provider asks for with
	// Retry-After before the next attempt.
	DefaultMaxRetryAfter = 5 * time.Minute
	// slowModelAfter: a model that has sent nothing for this long is
	// announced as a wait (a live event).
	slowModelAfter = 10 * time.Second
	// maxNoticeFailure bounds the failure's text in a retry notice.
	maxNoticeFailure = 300
)

// orDefault is d, or def when d is not positive. Pure.
func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// attemptOf is the activity's attempt number (1 outside an activity).
func attemptOf(ctx context.Context) (int32, *temporal.RetryPolicy) {
	if !activity.IsActivity(ctx) {
		return 1, nil
	}
	info := activity.GetInfo(ctx)
	return info.Attempt, info.RetryPolicy
}

// modelError turns a classified model failure into a Temporal error: the
// class is the error type, Retry-After (capped at maxRetryAfter) sets the
// next retry delay, and failures a retry cannot fix are non-retryable, as
// is a class that used up its own attempts (turnapi.ErrorClass.MaxAttempts).
func modelError(ctx context.Context, err error, maxRetryAfter time.Duration) error {
	var e *llm.Error
	if !errors.As(err, &e) {
		return err
	}
	if e.Class == turnapi.ClassCancelled && ctx.Err() != nil {
		return ctx.Err()
	}
	attempt, _ := attemptOf(ctx)
	return applicationError(e, attempt, orDefault(maxRetryAfter, DefaultMaxRetryAfter))
}

// applicationError is the Temporal error of a classified failure in the
// given attempt. Pure.
func applicationError(e *llm.Error, attempt int32, maxRetryAfter time.Duration) error {
	limit := e.Class.MaxAttempts()
	opts := temporal.ApplicationErrorOptions{
		NonRetryable: !e.Class.Retryable() || (limit > 0 && int(attempt) >= limit),
	}
	msg := e.Error()
	if e.RetryAfter > 0 {
		opts.NextRetryDelay = min(e.RetryAfter, maxRetryAfter)
		if e.RetryAfter > maxRetryAfter {
			msg += fmt.Sprintf(" (Retry-After %s, capped at %s)", e.RetryAfter.Round(time.Second), maxRetryAfter)
		}
	}
	return temporal.NewApplicationErrorWithOptions(msg, string(e.Class), opts)
}

// nextAttempt is how long Temporal waits before the next attempt after err
// ended the given attempt under policy, as the SDK computes it; false when
// there is no next attempt (or the policy is unknown). Pure.
func nextAttempt(err error, attempt int32, policy *temporal.RetryPolicy) (time.Duration, bool) {
	var appErr *temporal.ApplicationError
	if policy == nil || !errors.As(err, &appErr) || appErr.NonRetryable() ||
		slices.Contains(policy.NonRetryableErrorTypes, appErr.Type()) ||
		(policy.MaximumAttempts > 0 && attempt >= policy.MaximumAttempts) {
		return 0, false
	}
	if d := appErr.NextRetryDelay(); d > 0 {
		return d, true
	}
	d := time.Duration(float64(policy.InitialInterval) * math.Pow(policy.BackoffCoefficient, float64(attempt-1)))
	if (d <= 0 || d > policy.MaximumInterval) && policy.MaximumInterval > 0 {
		d = policy.MaximumInterval
	}
	return d, d > 0
}

// retryNotice is the live event announcing the wait before the next
// attempt of a failed model call: what failed and its class (the error's
// message says both), which attempt comes next of the most a call failing
// so may have (attemptLimit), and when. It is one line, the failure's text
// clipped, whatever the provider sent. Pure.
func retryNotice(err error, wait time.Duration, attempt int32, policy *temporal.RetryPolicy) string {
	var appErr *temporal.ApplicationError
	what := err.Error()
	if errors.As(err, &appErr) {
		what = appErr.Message()
	}
	of := ""
	if limit := attemptLimit(err, policy); limit > 0 {
		of = fmt.Sprintf(" of %d", limit)
	}
	return fmt.Sprintf("%s; next attempt (%d%s) in %s", clip(textline.Of(what, 0), maxNoticeFailure), attempt+1, of, wait.Round(100*time.Millisecond))
}

// attemptLimit is the most attempts in all of a call whose attempt failed
// with err: the policy's maximum, or the failure class's own bound
// (turnapi.ErrorClass.MaxAttempts, which counts every attempt of the activity) when
// it is lower; 0 when neither bounds it. Pure.
func attemptLimit(err error, policy *temporal.RetryPolicy) int32 {
	var limit int32
	if policy != nil && policy.MaximumAttempts > 0 {
		limit = policy.MaximumAttempts
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		if own := int32(turnapi.ErrorClass(appErr.Type()).MaxAttempts()); own > 0 && (limit == 0 || own < limit) {
			limit = own
		}
	}
	return limit
}

// announceRetry publishes, at once, every failed attempt that will be
// retried: what failed, which attempt comes next and when. A failure that
// ends the call is not announced here: the turn's outcome says it.
func announceRetry(ctx context.Context, pub *events.Publisher, err error) {
	attempt, policy := attemptOf(ctx)
	if wait, ok := nextAttempt(err, attempt, policy); ok {
		pub.Publish(events.KindWait, retryNotice(err, wait, attempt, policy))
	}
}

// slowWatch announces, once, a model that has sent nothing for a while.
type slowWatch struct {
	once sync.Once
	t    *time.Timer
}

// watchSlow starts the watch: after `after` without progress it publishes
// a wait event saying how long the call may still go without progress.
func watchSlow(pub *events.Publisher, after, idle time.Duration) *slowWatch {
	w := &slowWatch{}
	w.t = time.AfterFunc(after, func() {
		pub.Publish(events.KindWait, fmt.Sprintf("the model has sent nothing for %s; waiting (the call gives up after %s without progress)",
			after, idle))
	})
	return w
}

// progress ends the watch: the model is answering.
func (w *slowWatch) progress() { w.once.Do(func() { w.t.Stop() }) }
