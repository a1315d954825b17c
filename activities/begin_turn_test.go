package activities

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/turnapi"
	"github.com/talaria-agent/talaria/models"
)

// TestBeginTurnPromptFailure: a new session's system prompt that cannot be
// built fails BeginTurn with a non-retryable prompt_failed error saying
// why (the same files would fail again on every retry); a store error
// keeps its retry policy.
func TestBeginTurnPromptFailure(t *testing.T) {
	ctx := t.Context()
	store, err := models.Open(ctx, filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	a := &Activities{Store: store, BuildPrompt: func(context.Context, string, string) (string, error) {
		return "", errors.New("project context: resolve \"w\": getwd: no such file or directory")
	}}
	_, err = a.BeginTurn(ctx, turnapi.BeginTurnInput{TurnID: "t1", SessionID: "s1", TurnNumber: 1, Model: "m",
		UserMessage: "hi", StartedAt: time.Now()})
	app, ok := err.(*temporal.ApplicationError)
	if !ok || !app.NonRetryable() || app.Type() != PromptFailedType {
		t.Fatalf("BeginTurn = %#v, want a non-retryable %s application error", err, PromptFailedType)
	}
	if want := "begin turn t1: build the system prompt: project context: resolve"; !strings.HasPrefix(app.Message(), want) {
		t.Errorf("message = %q, want it to start with %q", app.Message(), want)
	}

	// A store error is not a prompt failure.
	store.Close()
	_, err = a.BeginTurn(ctx, turnapi.BeginTurnInput{TurnID: "t2", SessionID: "s2", TurnNumber: 1, Model: "m",
		UserMessage: "hi", StartedAt: time.Now()})
	if err == nil {
		t.Fatal("BeginTurn on a closed store succeeded")
	}
	if app, ok := err.(*temporal.ApplicationError); ok && app.NonRetryable() {
		t.Errorf("a store error became non-retryable: %v", err)
	}
}
