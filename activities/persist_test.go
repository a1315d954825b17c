package activities

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/talaria-agent/talaria/internal/pgtest"
	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

func TestStoreMayAnswerLater(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{errors.New("dial tcp: connection refused"), true},
		{fmt.Errorf("append: %w", models.ErrUnreachable), true},
		{fmt.Errorf("append: %w", models.ErrRejected), false},
		{fmt.Errorf("append: %w", models.ErrStoreGone), false},
		{fmt.Errorf("append: %w", models.ErrInvalidArgument), false},
		{context.Canceled, false},
	} {
		if got := storeMayAnswerLater(tc.err); got != tc.want {
			t.Errorf("storeMayAnswerLater(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestToolResultsWaitForTheStore: a batch whose results are ready while
// its PostgreSQL store does not answer stores them once the store is back,
// instead of failing and leaving calls that ran with "outcome unknown".
func TestToolResultsWaitForTheStore(t *testing.T) {
	dsn, proxy := pgtest.Proxied(t, pgtest.DSN(t, "persist"))
	ctx := context.Background()
	store, err := models.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.EnsureSession(ctx, "s", "m"); err != nil {
		t.Fatal(err)
	}
	a := &Activities{Store: store}
	var env testsuite.WorkflowTestSuite
	actEnv := env.NewTestActivityEnvironment()
	persist := func(ctx context.Context) (int, error) {
		saved, err := a.persistResults(ctx, 1, []models.Message{{SessionID: "s", TurnID: "t", IdemKey: toolKey("t", 1, "c1"),
			Role: "tool", ToolCallID: "c1", Name: "terminal", Content: "it ran"}})
		return len(saved), err
	}
	actEnv.RegisterActivity(persist)

	proxy.Down()
	back := time.AfterFunc(2*time.Second, proxy.Up)
	defer back.Stop()
	val, err := actEnv.ExecuteActivity(persist)
	if err != nil {
		t.Fatalf("results not stored after the store came back: %v", err)
	}
	var n int
	if err := val.Get(&n); err != nil || n != 1 {
		t.Fatalf("stored %d rows (%v), want 1", n, err)
	}
	if _, err := store.MessageByKey(ctx, toolKey("t", 1, "c1")); err != nil {
		t.Fatalf("the result is not in the store: %v", err)
	}
}

// TestCallModelNeedsItsSession: a model call for a session the store does
// not hold (deleted, or the store replaced, while the turn ran) fails with
// ErrSessionMissing before any model is asked, instead of answering from
// an empty conversation.
func TestCallModelNeedsItsSession(t *testing.T) {
	ctx := context.Background()
	store, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	a := &Activities{Store: store}
	_, err = a.CallModel(ctx, turnapi.CallModelInput{TurnID: "t", SessionID: "gone", Call: 1, Model: "m"})
	if !errors.Is(err, ErrSessionMissing) {
		t.Fatalf("CallModel for a missing session: %v, want ErrSessionMissing", err)
	}
	var app *temporal.ApplicationError
	if !errors.As(NonRetryableRejection(err), &app) || app.Type() != SessionMissingType || !app.NonRetryable() {
		t.Fatalf("not a non-retryable %s: %v", SessionMissingType, NonRetryableRejection(err))
	}
}
