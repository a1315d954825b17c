package activities

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/llm"
	"github.com/talaria-agent/talaria/internal/turnapi"
)

func TestApplicationError(t *testing.T) {
	tests := []struct {
		name         string
		err          llm.Error
		attempt      int32
		nonRetryable bool
		delay        time.Duration
		in           string
	}{
		{"rate limit with a day's Retry-After is capped", llm.Error{Class: turnapi.ClassRateLimit, Status: 429, Message: "slow down", RetryAfter: 24 * time.Hour},
			1, false, 3 * time.Second, "Retry-After 24h0m0s, capped at 3s"},
		{"short Retry-After is kept", llm.Error{Class: turnapi.ClassRateLimit, Status: 429, RetryAfter: 2 * time.Second}, 1, false, 2 * time.Second, "rate_limit"},
		{"server error backs off by policy", llm.Error{Class: turnapi.ClassServer, Status: 500}, 5, false, 0, "server_error"},
		{"auth is final", llm.Error{Class: turnapi.ClassAuth, Status: 401}, 1, true, 0, "auth"},
		{"invalid response, first attempt", llm.Error{Class: turnapi.ClassInvalidResponse, Status: 200}, 1, false, 0, "invalid_response"},
		{"invalid response, second attempt", llm.Error{Class: turnapi.ClassInvalidResponse, Status: 200}, 2, false, 0, "invalid_response"},
		{"invalid response, third attempt is the last", llm.Error{Class: turnapi.ClassInvalidResponse, Status: 200}, 3, true, 0, "invalid_response"},
		{"truncated reply is retried", llm.Error{Class: turnapi.ClassTruncatedReply}, 5, false, 0, "truncated_reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := applicationError(&tt.err, tt.attempt, 3*time.Second)
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) {
				t.Fatalf("%v is not an application error", err)
			}
			if appErr.Type() != string(tt.err.Class) || appErr.NonRetryable() != tt.nonRetryable || appErr.NextRetryDelay() != tt.delay {
				t.Fatalf("type %s non-retryable %v delay %v", appErr.Type(), appErr.NonRetryable(), appErr.NextRetryDelay())
			}
			if !strings.Contains(appErr.Message(), tt.in) {
				t.Fatalf("message %q lacks %q", appErr.Message(), tt.in)
			}
		})
	}
}

func TestNextAttempt(t *testing.T) {
	policy := &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		MaximumAttempts: 6, NonRetryableErrorTypes: []string{"auth"}}
	retryable := temporal.NewApplicationError("boom", "server_error")
	delayed := temporal.NewApplicationErrorWithOptions("slow down", "rate_limit", temporal.ApplicationErrorOptions{NextRetryDelay: 5 * time.Minute})
	tests := []struct {
		name    string
		err     error
		attempt int32
		policy  *temporal.RetryPolicy
		want    time.Duration
		ok      bool
	}{
		{"first backoff", retryable, 1, policy, time.Second, true},
		{"third backoff", retryable, 3, policy, 4 * time.Second, true},
		{"capped by the maximum interval", retryable, 5, &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 10, MaximumInterval: time.Minute}, time.Minute, true},
		{"the provider's delay", delayed, 2, policy, 5 * time.Minute, true},
		{"last attempt", retryable, 6, policy, 0, false},
		{"non-retryable error", temporal.NewNonRetryableApplicationError("no", "server_error", nil), 1, policy, 0, false},
		{"non-retryable type", temporal.NewApplicationError("no", "auth"), 1, policy, 0, false},
		{"unknown policy", retryable, 1, nil, 0, false},
		{"not an application error", errors.New("x"), 1, policy, 0, false},
	}
	for _, tt := range tests {
		got, ok := nextAttempt(tt.err, tt.attempt, tt.policy)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: %v %v, want %v %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
	notice := retryNotice(delayed, 5*time.Minute, 2, policy)
	if notice != "slow down; next attempt (3 of 6) in 5m0s" {
		t.Fatalf("notice %q", notice)
	}
}

// TestRetryNoticeShowsTheEffectiveLimit: a class with its own bound of
// attempts (invalid response, timeout) is announced with that bound, not
// the policy's; other classes with the policy's.
func TestRetryNoticeShowsTheEffectiveLimit(t *testing.T) {
	policy := &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 6}
	classed := func(class turnapi.ErrorClass, attempt int32) error {
		return applicationError(&llm.Error{Class: class, Status: 200, Message: "boom"}, attempt, time.Minute)
	}
	tests := []struct {
		name    string
		err     error
		attempt int32
		policy  *temporal.RetryPolicy
		want    string
	}{
		{"invalid response", classed(turnapi.ClassInvalidResponse, 1), 1, policy, "next attempt (2 of 3)"},
		{"timeout", classed(turnapi.ClassTimeout, 2), 2, policy, "next attempt (3 of 3)"},
		{"server error", classed(turnapi.ClassServer, 1), 1, policy, "next attempt (2 of 6)"},
		{"a policy tighter than the class", classed(turnapi.ClassTimeout, 1), 1,
			&temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 2}, "next attempt (2 of 2)"},
		{"an unbounded policy, a bounded class", classed(turnapi.ClassInvalidResponse, 1), 1,
			&temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2}, "next attempt (2 of 3)"},
		{"an unbounded policy and class", classed(turnapi.ClassServer, 1), 1,
			&temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2}, "next attempt (2) in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, ok := nextAttempt(tt.err, tt.attempt, tt.policy)
			if !ok {
				t.Fatalf("no next attempt after %v", tt.err)
			}
			if got := retryNotice(tt.err, wait, tt.attempt, tt.policy); !strings.Contains(got, tt.want) {
				t.Fatalf("notice %q lacks %q", got, tt.want)
			}
		})
	}
	// The class's bound counts every attempt: its third is the last.
	if _, ok := nextAttempt(classed(turnapi.ClassInvalidResponse, 3), 3, policy); ok {
		t.Fatal("an invalid response in the third attempt is retried")
	}
}

// TestRetryNoticeIsOneLine: whatever the provider sends (newlines, escape
// sequences, invalid UTF-8, a novel), the notice of a retry is one line
// saying what failed, its class, the next attempt of how many, and when.
func TestRetryNoticeIsOneLine(t *testing.T) {
	policy := &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 6}
	tests := []struct {
		name    string
		message string
		want    string
	}{
		{"an HTTP 500", "internal error", "model call failed (server_error, HTTP 500): internal error; next attempt (2 of 6) in 1s"},
		{"newlines and tabs", "line one\n\tline two\r\n", "model call failed (server_error, HTTP 500): line one line two; next attempt (2 of 6) in 1s"},
		{"an escape sequence", "bad\x1b[2Jgateway", "model call failed (server_error, HTTP 500): bad [2Jgateway; next attempt (2 of 6) in 1s"},
		{"invalid UTF-8", "bad \xff byte", "model call failed (server_error, HTTP 500): bad \uFFFD byte; next attempt (2 of 6) in 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := applicationError(&llm.Error{Class: turnapi.ClassServer, Status: 500, Message: tt.message}, 1, time.Minute)
			wait, ok := nextAttempt(err, 1, policy)
			if !ok {
				t.Fatal("an HTTP 500 is not retried")
			}
			if got := retryNotice(err, wait, 1, policy); got != tt.want {
				t.Fatalf("notice %q, want %q", got, tt.want)
			}
		})
	}
	long := applicationError(&llm.Error{Class: turnapi.ClassServer, Status: 500, Message: strings.Repeat("wörds\n", 500)}, 1, time.Minute)
	got := retryNotice(long, time.Second, 1, policy)
	if strings.ContainsAny(got, "\n\r") || len(got) > maxNoticeFailure+len("…; next attempt (2 of 6) in 1s") ||
		!strings.HasSuffix(got, "…; next attempt (2 of 6) in 1s") {
		t.Fatalf("a long failure is not clipped to one line: %d bytes %q", len(got), got)
	}
}
