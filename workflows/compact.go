package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// stuckGrowth is how much a context left above the threshold by a
// compaction must grow before the next preflight compaction: a quarter.
const stuckGrowth = 4

// needsCompaction is the preflight decision before a model call: the
// context passed the threshold, and the last compaction did not leave it
// there (then it waits for a quarter more growth). Pure.
func needsCompaction(c ContextState, threshold int) bool {
	if threshold <= 0 || c.Tokens <= threshold {
		return false
	}
	return c.StuckAt == 0 || c.Tokens > c.StuckAt+c.StuckAt/stuckGrowth
}

// compactOnOverflow decides whether a failed model call is answered by a
// compaction and a retry: the provider refused the request as too long and
// attempts are left. Pure.
func compactOnOverflow(c ContextState, err error, attempts int) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == string(turnapi.ClassContextOverflow) && c.OverflowRetries < attempts
}

// afterCompaction folds a compaction's result into the context state. Pure.
func afterCompaction(c ContextState, res turnapi.CompressContextResult, threshold int, now time.Time, cooldown time.Duration) ContextState {
	if res.SessionID != "" {
		c.SessionID = res.SessionID
	}
	if res.Compacted {
		c.Compactions++
		c.Tokens = res.After
		c.JustCompacted = true
	}
	c.StuckAt = 0
	if threshold > 0 && c.Tokens > threshold {
		c.StuckAt = c.Tokens
	}
	if res.Fallback && res.SummaryError != "" && cooldown > 0 && !now.Before(c.SummaryCooldownUntil) {
		c.SummaryCooldownUntil = now.Add(cooldown)
	}
	return c
}

// afterCall folds a model call's reported context size into the state.
// The compaction right before it was estimated (chars/4); when the provider
// reports the compacted context still above the threshold, the compaction
// is marked stuck so the next preflight waits for growth. Pure.
func afterCall(c ContextState, tokens, threshold int) ContextState {
	if tokens > 0 {
		c.Tokens = tokens
	}
	if c.JustCompacted && threshold > 0 && c.Tokens > threshold {
		c.StuckAt = c.Tokens
	}
	c.JustCompacted = false
	c.OverflowRetries = 0
	return c
}

// compact runs one compaction and moves the turn to the session it
// returns; it reports whether the conversation was compacted. A failed
// compaction leaves the conversation as it was.
func compact(ctx workflow.Context, in TurnInput, turnID string, st *TurnState, reason string) bool {
	now := workflow.Now(ctx)
	var res turnapi.CompressContextResult
	err := workflow.ExecuteActivity(compactOptions(ctx, in), turnapi.CompressContextName, turnapi.CompressContextInput{
		TurnID: turnID, SessionID: st.Context.session(in.SessionID), Model: in.Model, Provider: st.Provider,
		Workdir: in.Workdir, Reason: reason, Tools: in.Tools,
		SkipSummary: now.Before(st.Context.SummaryCooldownUntil),
		IdleTimeout: in.ModelTimeout, MaxRetryAfter: in.MaxRetryAfter,
	}).Get(ctx, &res)
	if err != nil {
		st.Context.StuckAt = st.Context.Tokens
		st.note("compaction (%s) failed: %s", reason, errorMessage(err))
		return false
	}
	st.Usage = st.Usage.Add(res.Usage)
	st.Context = afterCompaction(st.Context, res, in.Compaction.Threshold, now, in.Compaction.Cooldown)
	st.note("compaction (%s): %d → %d tokens", reason, res.Before, res.After)
	return res.Compacted
}

// compactAfterRefusal answers a model call refused as too long with a
// compaction; it reports whether the call should be made again (compacted,
// and not interrupted meanwhile).
func compactAfterRefusal(ctx workflow.Context, in TurnInput, turnID string, st *TurnState, err error) bool {
	if st.Interrupted || !compactOnOverflow(st.Context, err, in.Compaction.OverflowAttempts) {
		return false
	}
	st.Context.OverflowRetries++
	return compact(ctx, in, turnID, st, turnapi.CompactOverflow) && !st.Interrupted
}
