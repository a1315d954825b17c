package workflows

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

func TestNeedsCompaction(t *testing.T) {
	tests := []struct {
		name      string
		c         ContextState
		threshold int
		want      bool
	}{
		{"threshold 0 never", ContextState{Tokens: 1_000_000}, 0, false},
		{"negative threshold never", ContextState{Tokens: 1_000_000}, -1, false},
		{"no tokens", ContextState{}, 1000, false},
		{"below", ContextState{Tokens: 999}, 1000, false},
		{"at", ContextState{Tokens: 1000}, 1000, false},
		{"one above", ContextState{Tokens: 1001}, 1000, true},
		{"far above", ContextState{Tokens: 50_000}, 1000, true},
		// StuckAt 2000: waits until tokens > 2000 + 2000/4 = 2500.
		{"stuck, unchanged", ContextState{Tokens: 2000, StuckAt: 2000}, 1000, false},
		{"stuck, grown a little", ContextState{Tokens: 2400, StuckAt: 2000}, 1000, false},
		{"stuck, exactly a quarter more", ContextState{Tokens: 2500, StuckAt: 2000}, 1000, false},
		{"stuck, one above a quarter more", ContextState{Tokens: 2501, StuckAt: 2000}, 1000, true},
		// StuckAt/4 is integer division: 1003/4 = 250, bound 1253.
		{"stuck, odd size at bound", ContextState{Tokens: 1253, StuckAt: 1003}, 1000, false},
		{"stuck, odd size above bound", ContextState{Tokens: 1254, StuckAt: 1003}, 1000, true},
		{"stuck but below threshold", ContextState{Tokens: 900, StuckAt: 500}, 1000, false},
		{"stuck but threshold 0", ContextState{Tokens: 1_000_000, StuckAt: 2000}, 0, false},
	}
	for _, tt := range tests {
		if got := needsCompaction(tt.c, tt.threshold); got != tt.want {
			t.Errorf("%s: needsCompaction(%+v, %d) = %v, want %v", tt.name, tt.c, tt.threshold, got, tt.want)
		}
	}
}

// activityFailure returns err the way a workflow sees an activity that
// failed with it: converted to a Failure and back, inside an ActivityError.
func activityFailure(t *testing.T, err error) error {
	t.Helper()
	conv := temporal.GetDefaultFailureConverter()
	f := &failurepb.Failure{
		Message: "activity error",
		FailureInfo: &failurepb.Failure_ActivityFailureInfo{ActivityFailureInfo: &failurepb.ActivityFailureInfo{
			ActivityType: &commonpb.ActivityType{Name: turnapi.CallModelName},
			ActivityId:   "5",
		}},
		Cause: conv.ErrorToFailure(err),
	}
	out := conv.FailureToError(f)
	var actErr *temporal.ActivityError
	if !errors.As(out, &actErr) {
		t.Fatalf("converted failure is %T, want an ActivityError", out)
	}
	return out
}

func TestCompactOnOverflow(t *testing.T) {
	appErr := func(class turnapi.ErrorClass) error {
		return temporal.NewApplicationError("the provider refused the call", string(class))
	}
	overflow := appErr(turnapi.ClassContextOverflow)
	tests := []struct {
		name     string
		c        ContextState
		err      error
		attempts int
		want     bool
	}{
		{"overflow as activity failure", ContextState{}, activityFailure(t, overflow), 3, true},
		{"overflow bare", ContextState{}, overflow, 3, true},
		{"overflow wrapped with %w", ContextState{}, fmt.Errorf("call model: %w", overflow), 3, true},
		{"overflow activity failure wrapped with %w", ContextState{}, fmt.Errorf("turn: %w", activityFailure(t, overflow)), 3, true},
		{"non-retryable overflow", ContextState{},
			activityFailure(t, temporal.NewNonRetryableApplicationError("too long", string(turnapi.ClassContextOverflow), nil)), 3, true},
		{"last attempt left", ContextState{OverflowRetries: 2}, activityFailure(t, overflow), 3, true},
		{"attempts exhausted", ContextState{OverflowRetries: 3}, activityFailure(t, overflow), 3, false},
		{"retries beyond attempts", ContextState{OverflowRetries: 4}, activityFailure(t, overflow), 3, false},
		{"attempts 0", ContextState{}, activityFailure(t, overflow), 0, false},
		{"rate limit", ContextState{}, activityFailure(t, appErr(turnapi.ClassRateLimit)), 3, false},
		{"bad request", ContextState{}, activityFailure(t, appErr(turnapi.ClassBadRequest)), 3, false},
		{"empty type", ContextState{}, temporal.NewApplicationError("x", ""), 3, false},
		{"nil error", ContextState{}, nil, 3, false},
		{"plain error", ContextState{}, errors.New(string(turnapi.ClassContextOverflow)), 3, false},
		{"plain error wrapped", ContextState{}, fmt.Errorf("x: %w", errors.New("context_overflow")), 3, false},
	}
	for _, tt := range tests {
		if got := compactOnOverflow(tt.c, tt.err, tt.attempts); got != tt.want {
			t.Errorf("%s: compactOnOverflow(%+v, %v, %d) = %v, want %v", tt.name, tt.c, tt.err, tt.attempts, got, tt.want)
		}
	}
}

func TestAfterCompaction(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	const cooldown = 10 * time.Minute
	running := now.Add(time.Minute) // an earlier cooldown still running
	expired := now.Add(-time.Second)
	tests := []struct {
		name      string
		c         ContextState
		res       turnapi.CompressContextResult
		threshold int
		cooldown  time.Duration
		want      ContextState
	}{
		{"compacted below threshold",
			ContextState{SessionID: "s1", Tokens: 5000, Compactions: 1, OverflowRetries: 1},
			turnapi.CompressContextResult{SessionID: "s2", Compacted: true, Before: 5000, After: 1500}, 4000, cooldown,
			ContextState{SessionID: "s2", Tokens: 1500, Compactions: 2, OverflowRetries: 1}},
		{"compacted from the turn's own session",
			ContextState{Tokens: 5000},
			turnapi.CompressContextResult{SessionID: "child", Compacted: true, After: 1000}, 4000, cooldown,
			ContextState{SessionID: "child", Tokens: 1000, Compactions: 1}},
		{"compacted, still above threshold: stuck",
			ContextState{SessionID: "s1", Tokens: 9000},
			turnapi.CompressContextResult{SessionID: "s2", Compacted: true, After: 6000}, 4000, cooldown,
			ContextState{SessionID: "s2", Tokens: 6000, Compactions: 1, StuckAt: 6000}},
		{"compacted exactly to threshold: not stuck",
			ContextState{Tokens: 9000},
			turnapi.CompressContextResult{SessionID: "s2", Compacted: true, After: 4000}, 4000, cooldown,
			ContextState{SessionID: "s2", Tokens: 4000, Compactions: 1}},
		{"compacted below threshold clears an old StuckAt",
			ContextState{Tokens: 9000, StuckAt: 6000},
			turnapi.CompressContextResult{SessionID: "s3", Compacted: true, After: 2000}, 4000, cooldown,
			ContextState{SessionID: "s3", Tokens: 2000, Compactions: 1}},
		{"threshold 0 clears StuckAt",
			ContextState{Tokens: 9000, StuckAt: 6000},
			turnapi.CompressContextResult{SessionID: "s3", Compacted: true, After: 7000}, 0, cooldown,
			ContextState{SessionID: "s3", Tokens: 7000, Compactions: 1}},
		{"not compacted keeps tokens and counter, stuck above threshold",
			ContextState{SessionID: "s1", Tokens: 5000, Compactions: 1},
			turnapi.CompressContextResult{SessionID: "s1", Before: 5000, After: 5000}, 4000, cooldown,
			ContextState{SessionID: "s1", Tokens: 5000, Compactions: 1, StuckAt: 5000}},
		{"not compacted ignores After",
			ContextState{SessionID: "s1", Tokens: 5000},
			turnapi.CompressContextResult{SessionID: "s1", After: 10}, 4000, cooldown,
			ContextState{SessionID: "s1", Tokens: 5000, StuckAt: 5000}},
		{"not compacted below threshold",
			ContextState{SessionID: "s1", Tokens: 3000, StuckAt: 2500},
			turnapi.CompressContextResult{SessionID: "s1"}, 4000, cooldown,
			ContextState{SessionID: "s1", Tokens: 3000}},
		{"empty result session keeps the session",
			ContextState{SessionID: "s1", Tokens: 5000},
			turnapi.CompressContextResult{}, 4000, cooldown,
			ContextState{SessionID: "s1", Tokens: 5000, StuckAt: 5000}},
		{"empty result session keeps the turn's own",
			ContextState{Tokens: 100},
			turnapi.CompressContextResult{Compacted: true, After: 50}, 4000, cooldown,
			ContextState{Tokens: 50, Compactions: 1}},
		{"summary failure starts the cooldown",
			ContextState{Tokens: 5000},
			turnapi.CompressContextResult{SessionID: "s2", Compacted: true, After: 1000, Fallback: true, SummaryError: "boom"}, 4000, cooldown,
			ContextState{SessionID: "s2", Tokens: 1000, Compactions: 1, SummaryCooldownUntil: now.Add(cooldown)}},
		{"summary failure after an expired cooldown starts a new one",
			ContextState{Tokens: 5000, SummaryCooldownUntil: expired},
			turnapi.CompressContextResult{SessionID: "s2", Compacted: true, After: 1000, Fallback: true, SummaryError: "boom"}, 4000, cooldown,
			ContextState{SessionID: "s2", Tokens: 1000, Compactions: 1, SummaryCooldownUntil: now.Add(cooldown)}},
		{"summary failure the moment a cooldown ends starts a new one",
			ContextState{Tokens: 5000, SummaryCooldownUntil: now},
			turnapi.CompressContextResult{SessionID: "s2", Compacted: true, After: 1000, Fallback: true, SummaryError: "boom"}, 4000, cooldown,
			ContextState{SessionID: "s2", Tokens: 1000, Compactions: 1, SummaryCooldownUntil: now.Add(cooldown)}},
		{"running cooldown is not extended",
			ContextState{Tokens: 5000, SummaryCooldownUntil: running},
			turnapi.CompressContextResult{SessionID: "s2", Compacted: true, After: 1000, Fallback: true, SummaryError: "the summariser is cooling down after a failure"}, 4000, cooldown,
			ContextState{SessionID: "s2", Tokens: 1000, Compactions: 1, SummaryCooldownUntil: running}},
		{"cooldown 0 sets none",
			ContextState{Tokens: 5000},
			turnapi.CompressContextResult{SessionID: "s2", Compacted: true, After: 1000, Fallback: true, SummaryError: "boom"}, 4000, 0,
			ContextState{SessionID: "s2", Tokens: 1000, Compactions: 1}},
		{"fallback without summary error sets none",
			ContextState{Tokens: 5000},
			turnapi.CompressContextResult{SessionID: "s2", Compacted: true, After: 1000, Fallback: true}, 4000, cooldown,
			ContextState{SessionID: "s2", Tokens: 1000, Compactions: 1}},
		{"summary error without fallback sets none",
			ContextState{Tokens: 5000},
			turnapi.CompressContextResult{SessionID: "s2", Compacted: true, After: 1000, SummaryError: "boom"}, 4000, cooldown,
			ContextState{SessionID: "s2", Tokens: 1000, Compactions: 1}},
	}
	for _, tt := range tests {
		// Until a model call reports the size, a compaction is "just made".
		tt.want.JustCompacted = tt.res.Compacted
		got := afterCompaction(tt.c, tt.res, tt.threshold, now, tt.cooldown)
		if !got.SummaryCooldownUntil.Equal(tt.want.SummaryCooldownUntil) {
			t.Errorf("%s: SummaryCooldownUntil = %v, want %v", tt.name, got.SummaryCooldownUntil, tt.want.SummaryCooldownUntil)
		}
		got.SummaryCooldownUntil, tt.want.SummaryCooldownUntil = time.Time{}, time.Time{}
		if got != tt.want {
			t.Errorf("%s: afterCompaction(%+v, %+v, %d) =\n  %+v, want\n  %+v", tt.name, tt.c, tt.res, tt.threshold, got, tt.want)
		}
	}
}

// TestAfterCompactionIsPure: the input state is a value; folding a result
// into it leaves the caller's copy as it was.
func TestAfterCompactionIsPure(t *testing.T) {
	c := ContextState{SessionID: "s1", Tokens: 5000, Compactions: 1}
	before := c
	_ = afterCompaction(c, turnapi.CompressContextResult{SessionID: "s2", Compacted: true, After: 10, Fallback: true, SummaryError: "x"},
		100, time.Unix(0, 0), time.Minute)
	if c != before {
		t.Fatalf("afterCompaction changed its input: %+v, was %+v", c, before)
	}
}

func TestContextStateSession(t *testing.T) {
	tests := []struct {
		c          ContextState
		turn, want string
	}{
		{ContextState{}, "turn-session", "turn-session"},
		{ContextState{SessionID: "child"}, "turn-session", "child"},
		{ContextState{SessionID: "child"}, "", "child"},
		{ContextState{}, "", ""},
	}
	for _, tt := range tests {
		if got := tt.c.session(tt.turn); got != tt.want {
			t.Errorf("%+v.session(%q) = %q, want %q", tt.c, tt.turn, got, tt.want)
		}
	}
}

func TestAfterCall(t *testing.T) {
	for _, tt := range []struct {
		name      string
		c         ContextState
		tokens    int
		threshold int
		want      ContextState
	}{
		{"report replaces the estimate", ContextState{Tokens: 100, OverflowRetries: 2}, 250, 1000,
			ContextState{Tokens: 250}},
		{"no report keeps the estimate", ContextState{Tokens: 100}, 0, 1000,
			ContextState{Tokens: 100}},
		{"compacted, reported below the threshold", ContextState{Tokens: 600, JustCompacted: true}, 900, 1000,
			ContextState{Tokens: 900}},
		{"compacted, reported above the threshold: stuck", ContextState{Tokens: 600, JustCompacted: true}, 1200, 1000,
			ContextState{Tokens: 1200, StuckAt: 1200}},
		{"above the threshold without a compaction: not stuck", ContextState{Tokens: 600}, 1200, 1000,
			ContextState{Tokens: 1200}},
		{"threshold 0: never stuck", ContextState{Tokens: 600, JustCompacted: true}, 1200, 0,
			ContextState{Tokens: 1200}},
		{"an earlier stuck mark stays", ContextState{Tokens: 600, StuckAt: 1100}, 1200, 1000,
			ContextState{Tokens: 1200, StuckAt: 1100}},
	} {
		if got := afterCall(tt.c, tt.tokens, tt.threshold); got != tt.want {
			t.Errorf("%s: afterCall(%+v, %d, %d) = %+v, want %+v", tt.name, tt.c, tt.tokens, tt.threshold, got, tt.want)
		}
	}
}

func TestReservationKey(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tt := range []struct {
		id   string
		want string
	}{
		{"", ""},
		{"abc123", "abc123"},
		{strings.Repeat("y", maxReservationKey), strings.Repeat("y", maxReservationKey)},
	} {
		if got := reservationKey(Message{RequestID: tt.id}); got != tt.want {
			t.Errorf("reservationKey(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
	k := reservationKey(Message{RequestID: long})
	if len(k) > 256-1 || !strings.HasPrefix(k, "sha256:") || k != reservationKey(Message{RequestID: long}) ||
		k == reservationKey(Message{RequestID: long + "z"}) {
		t.Errorf("long id key %q: want a stable, distinct digest that fits the column", k)
	}
}
